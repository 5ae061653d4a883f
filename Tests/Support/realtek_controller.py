"""The Realtek emulation moved into vendor_controller.py (personalities.py holds
the Realtek ROM and the Intel bootloaders); this name still runs it with the
same arguments and output: python realtek_controller.py [--chip rtl8761bu]
[--rom-version N] [--record FILE] [--payload FILE] [--plain N]."""
import os
import runpy

runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "vendor_controller.py"), run_name="__main__")

"""scripts/literal-align.awk, the shipped build's IR step (docs/ARCHITECTURE.md,
"Builds"): it gives Swift's string literals byte alignment and fails the build,
rather than guessing, when an instruction claims more alignment of a literal or
a literal comes in a form it does not know. Fed small IR modules as swiftc
writes them."""
import subprocess
from pathlib import Path

from harness import REPO

SCRIPT = str(Path(REPO) / "scripts/literal-align.awk")
LITERALS = (
    '@.str.3.abc = private unnamed_addr constant [4 x i8] c"abc\\00"\n'
    '@".str.9.a=b c\\E2\\80\\A6" = private unnamed_addr constant [9 x i8] c"a=b c\\E2\\80\\A6\\00"\n'
)


def run(tmp_path, ir):
    path = tmp_path / "m.ll"
    path.write_text(ir)
    return subprocess.run(["awk", "-f", SCRIPT, str(path), str(path)], capture_output=True, text=True, timeout=30)


def test_literals_get_byte_alignment_and_nothing_else_changes(tmp_path):
    body = ("define void @f(ptr %p) {\n"
            '  store i64 ptrtoint (ptr @".str.9.a=b c\\E2\\80\\A6" to i64), ptr %p, align 8\n'
            "  %v = load i8, ptr @.str.3.abc, align 1\n"
            "  ret void\n}\n")
    out = run(tmp_path, LITERALS + body)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].endswith('c"abc\\00", align 1')
    assert lines[1].endswith('\\A6\\00", align 1')
    assert "\n".join(lines[2:]) + "\n" == body


def test_an_instruction_claiming_a_literals_alignment_fails(tmp_path):
    out = run(tmp_path, LITERALS + "define void @f() {\n  %v = load i32, ptr @.str.3.abc, align 4\n  ret void\n}\n")
    assert out.returncode != 0
    assert "claims alignment of @.str.3.abc" in out.stderr


def test_a_literal_in_an_unknown_form_fails(tmp_path):
    out = run(tmp_path, '@.str.3.abc = private unnamed_addr constant [4 x i8] c"abc\\00", section "x"\n')
    assert out.returncode != 0
    assert "a form this script does not know" in out.stderr

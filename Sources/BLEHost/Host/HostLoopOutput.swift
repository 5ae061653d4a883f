extension HostLoop where App: ~Copyable, Setup: ~Copyable {
    /// Fills `outgoing` with the next packet to send (the set-up's command, or
    /// what the host's flow control allows); false when there is none.
    public mutating func nextOutgoing() -> Bool {
        switch progress.state {
        case .settingUp:
            guard progress.setupCommandPending else { return false }
            progress.setupCommandPending = false
            setup.command(into: &outgoing.contents)
            return true
        case .running:
            return host.nextOutgoing(into: &outgoing.contents)
        case .needsFiles, .finished:
            return false
        }
    }
}

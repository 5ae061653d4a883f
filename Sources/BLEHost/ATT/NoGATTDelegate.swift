/// The delegate of an application that serves no dynamic attribute and subscribes to nothing.
public struct NoGATTDelegate: GATTDelegate {
    public init() {}
}

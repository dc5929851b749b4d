import OffstageCore

extension CoreError {
    /// The Varlink error for this core error in `interface`: the error of the same name (`<interface>.<Code>`) with
    /// its message and fix, as every interface declares them.
    public func varlink(in interface: String) -> VarlinkError {
        VarlinkError("\(interface).\(code.rawValue)", parameters: ["message": .string(message), "fix": .string(fix)])
    }
}

/// Bytes that are a key: never in a description, a dump or a mirror, so no log line, error or debug print that
/// happens to include the value holding them can carry them (reference section 25: secrets never reach a log, at
/// any level).
public struct SecretBytes: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public let bytes: [UInt8]

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    public var description: String { "<secret>" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}

extension MasterKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "MasterKey(<secret>)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}

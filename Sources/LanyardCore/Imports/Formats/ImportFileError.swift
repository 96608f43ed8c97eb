import LanyardSupport

/// A file no reader can read at all (not one bad record: those are reported): `INVALID_REQUEST` over HTTP, one line
/// on the command line.
public struct ImportFileError: Error, Sendable, CustomStringConvertible {
    public var description: String

    init(_ description: String) {
        self.description = description
    }

    static func parse(_ bytes: [UInt8]) throws(ImportFileError) -> JSONValue {
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw ImportFileError("not JSON (at byte \(error.offset): \(error.reason))")
        }
    }
}

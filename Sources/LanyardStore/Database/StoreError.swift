/// Failures of the storage layer that the domain distinguishes.
public enum StoreError: Error, Equatable, CustomStringConvertible {
    /// A unique constraint refused the write; the domain turns this into a conflict or retries.
    case uniqueViolation
    /// Two transactions touched the same rows and the database gave up on one; safe to retry.
    case serializationFailure
    case unexpectedValue(column: String)
    case unavailable(String)

    public var description: String {
        switch self {
        case .uniqueViolation: "unique constraint violated"
        case .serializationFailure: "serialization failure"
        case .unexpectedValue(let column): "unexpected value in column \(column)"
        case .unavailable(let reason): "database unavailable: \(reason)"
        }
    }
}

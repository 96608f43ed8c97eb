/// Failures of the storage layer that the domain distinguishes.
public enum StoreError: Error, Equatable, CustomStringConvertible {
    /// A unique constraint refused the write; the domain turns this into a conflict or retries.
    case uniqueViolation
    /// Two transactions touched the same rows and the database gave up on one; safe to retry.
    case serializationFailure
    /// A `NOT NULL` column got no value: a guarded write (`IdentityStore.link`) found the row it depends on gone.
    case notNullViolation
    /// A write referred to a row that is gone: a concurrent transaction deleted it (an account, a session)
    /// after this one read it. A retry reads again and sees it gone.
    case foreignKeyViolation
    case unexpectedValue(column: String)
    case unavailable(String)

    /// A concurrent transaction made this one fail; running it again reads what that one committed.
    public var isConflict: Bool {
        switch self {
        case .uniqueViolation, .serializationFailure, .foreignKeyViolation: true
        case .notNullViolation, .unexpectedValue, .unavailable: false
        }
    }

    public var description: String {
        switch self {
        case .uniqueViolation: "unique constraint violated"
        case .serializationFailure: "serialization failure"
        case .notNullViolation: "not-null constraint violated"
        case .foreignKeyViolation: "foreign key constraint violated"
        case .unexpectedValue(let column): "unexpected value in column \(column)"
        case .unavailable(let reason): "database unavailable: \(reason)"
        }
    }
}

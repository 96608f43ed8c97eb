import Foundation

/// What a verified ID token says about the person.
public struct VerifiedIdentity: Sendable, Equatable {
    public var provider: Provider
    public var subject: String
    public var email: String?
    public var emailVerified: Bool
    public var isPrivateEmail: Bool
    /// The full name, when the token carries one (Google does; Apple never does).
    public var name: String?
    public var audience: String

    public init(provider: Provider, subject: String, email: String?, emailVerified: Bool, isPrivateEmail: Bool,
                name: String?, audience: String) {
        self.provider = provider
        self.subject = subject
        self.email = email
        self.emailVerified = emailVerified
        self.isPrivateEmail = isPrivateEmail
        self.name = name
        self.audience = audience
    }
}

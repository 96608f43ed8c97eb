import Foundation

/// An identifier the server gave, typed by what it names, so that an account's id and a group's cannot be swapped
/// without the compiler saying so. In JSON it is the plain string.
///
/// ```swift
/// func remove(_ member: User.ID, from group: LanyardGroup.ID) async throws { … }
/// let id: User.ID = "01a2…"          // a literal, in tests and previews
/// print(id.rawValue)                  // the string, for your own storage
/// ```
public struct Identifier<Tag>: RawRepresentable, Hashable, Sendable, Codable, Comparable, ExpressibleByStringLiteral,
    CustomStringConvertible {
    /// The identifier as the server writes it.
    public let rawValue: String

    /// An identifier from its string.
    ///
    /// ```swift
    /// let id = User.ID(rawValue: stored)
    /// ```
    public init(rawValue: String) { self.rawValue = rawValue }

    /// An identifier from its string.
    ///
    /// ```swift
    /// let id = User.ID(stored)
    /// ```
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public init(stringLiteral value: String) { rawValue = value }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { rawValue }
}

extension User {
    /// An account's id.
    public typealias ID = Identifier<User>
}

extension LanyardGroup {
    /// A group's id.
    public typealias ID = Identifier<LanyardGroup>
}

extension DeviceSession {
    /// A session's id (the `sid` of its access tokens).
    public typealias ID = Identifier<DeviceSession>
}

extension GroupInvite {
    /// An invite's id (never its code).
    public typealias ID = Identifier<GroupInvite>
}

extension Passkey {
    /// A passkey's id: its identity's.
    public typealias ID = Identifier<Passkey>
}

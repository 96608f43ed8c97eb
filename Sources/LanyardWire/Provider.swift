/// A sign-in provider: `.apple` or `.google`.
///
/// A struct rather than an enum so that a server offering a provider this version of the SDK does not know
/// still decodes.
///
/// ```swift
/// if client.user?.linkedProviders.contains(where: { $0.provider == .google }) == false {
///     // offer "Link Google"
/// }
/// ```
public struct Provider: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The provider's name on the wire: `apple`, `google`.
    public let rawValue: String

    /// Wraps a provider name as the server spells it.
    ///
    /// ```swift
    /// let apple = Provider(rawValue: "apple") // == .apple
    /// ```
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Sign in with Apple.
    ///
    /// ```swift
    /// try await client.unlink(.apple)
    /// ```
    public static let apple = Provider(rawValue: "apple")

    /// Sign in with Google.
    ///
    /// ```swift
    /// try await client.unlink(.google)
    /// ```
    public static let google = Provider(rawValue: "google")

    /// A name to show a person: "Apple", "Google".
    ///
    /// ```swift
    /// Text("Linked with \(provider.displayName)")
    /// ```
    public var displayName: String {
        switch self {
        case .apple: "Apple"
        case .google: "Google"
        default: rawValue.prefix(1).uppercased() + rawValue.dropFirst()
        }
    }

    /// The wire name.
    ///
    /// ```swift
    /// print(Provider.google) // google
    /// ```
    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

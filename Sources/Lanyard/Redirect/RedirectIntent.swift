/// What a redirect sign-in does once the browser comes back (`LanyardClient.authorizationURL(for:redirectURI:intent:)`).
///
/// ```swift
/// let url = try await client.authorizationURL(for: .microsoft, redirectURI: callback, intent: .link)
/// ```
public enum RedirectIntent: String, Sendable, Codable, CaseIterable {
    /// Signs in (or up); a held guest session is upgraded or merged, as with a native sign-in.
    case signIn = "signin"
    /// Adds the provider to the signed-in account: the flow is started with the session's bearer and finished by
    /// that session.
    case link
}

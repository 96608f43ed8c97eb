/// Lanyard's version, in one place: `lanyard --version`, the OpenAPI document
/// (`info.version`, checked by a test), the SDK's `X-Client-Info`, and the release archive's name. The
/// CHANGELOG's newest heading names it too (also checked).
///
/// ```swift
/// print(LanyardVersion.current)  // "0.8.0"
/// ```
public enum LanyardVersion {
    /// Semantic version; 0.x while the API may still change between minor versions.
    public static let current = "0.8.0"
}

import Foundation

/// Switching day (reference section 24): where the bridge finds the old systems' keys, and whether access tokens
/// carry the legacy id. A source with nothing configured is not offered (`UNSUPPORTED_PROVIDER`), except in dev
/// mode, where the emulator's keys stand in for all three.
public struct MigrationSettings: Sendable, Equatable {
    /// Google's securetoken service account's keys as a JSON Web Key Set (the same keys Firebase documents as
    /// X.509 certificates).
    public static let firebaseKeys = "https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com"
    /// Supabase's local development secret (the Supabase CLI's default): what dev mode signs HS256 tokens with.
    public static let supabaseDevSecret = "super-secret-jwt-token-with-at-least-32-characters-long"

    /// `LANYARD_FIREBASE_PROJECT_ID`: the `aud` of accepted Firebase ID tokens, and their issuer's last part.
    public var firebaseProjectID: String?
    /// `LANYARD_FIREBASE_KEYS_URL`.
    public var firebaseKeysURL = firebaseKeys
    /// `LANYARD_SUPABASE_JWT_SECRET`: the project's legacy JWT secret (HS256, its bytes as they are).
    public var supabaseJWTSecret: String?
    /// `LANYARD_SUPABASE_JWKS_URL`: the project's signing keys (`https://<ref>.supabase.co/auth/v1/.well-known/jwks.json`).
    public var supabaseJWKSURL: String?
    /// `LANYARD_SUPABASE_ISSUER`: checked when set.
    public var supabaseIssuer: String?
    /// `LANYARD_CLERK_JWKS_URL`: the instance's keys (its Frontend API URL + `/.well-known/jwks.json`).
    public var clerkJWKSURL: String?
    /// `LANYARD_CLERK_ISSUER`: the instance's Frontend API URL, checked when set.
    public var clerkIssuer: String?
    /// `LANYARD_TOKEN_LEGACY_ID=1`: access tokens carry the account's `legacy_id`.
    public var tokenLegacyID = false
    /// `LANYARD_SUPABASE_KEEP_IDS=1`: a Supabase guest the bridge brings across (one the import did not) keeps its
    /// UUID as its Lanyard id where no account has that id, as `lanyard import supabase --keep-ids` does.
    public var supabaseKeepIDs = false

    public init() {}

    public var offersFirebase: Bool { firebaseProjectID != nil }
    public var offersSupabase: Bool { supabaseJWTSecret != nil || supabaseJWKSURL != nil }
    public var offersClerk: Bool { clerkJWKSURL != nil }

    static func read(_ reader: EnvironmentReader) throws(ConfigurationError) -> MigrationSettings {
        var settings = MigrationSettings()
        if let project = reader.string("LANYARD_FIREBASE_PROJECT_ID") {
            // Firebase project ids: 6 to 30 lower-case letters, digits and hyphens.
            guard (6...30).contains(project.count),
                  project.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }) else {
                throw ConfigurationError(variable: "LANYARD_FIREBASE_PROJECT_ID",
                                         problem: "expected a Firebase project id (6-30 lower-case letters, digits and -)")
            }
            settings.firebaseProjectID = project
        }
        settings.firebaseKeysURL = try reader.url("LANYARD_FIREBASE_KEYS_URL") ?? settings.firebaseKeysURL
        if let secret = reader.string("LANYARD_SUPABASE_JWT_SECRET") {
            guard secret.utf8.count >= 32 else {
                throw ConfigurationError(variable: "LANYARD_SUPABASE_JWT_SECRET",
                                         problem: "must be the project's JWT secret (Supabase's are at least 32 characters)")
            }
            settings.supabaseJWTSecret = secret
        }
        settings.supabaseJWKSURL = try reader.url("LANYARD_SUPABASE_JWKS_URL")
        settings.supabaseIssuer = reader.string("LANYARD_SUPABASE_ISSUER")
        settings.clerkJWKSURL = try reader.url("LANYARD_CLERK_JWKS_URL")
        settings.clerkIssuer = reader.string("LANYARD_CLERK_ISSUER")
        settings.tokenLegacyID = try reader.flag("LANYARD_TOKEN_LEGACY_ID") ?? false
        settings.supabaseKeepIDs = try reader.flag("LANYARD_SUPABASE_KEEP_IDS") ?? false
        return settings
    }
}

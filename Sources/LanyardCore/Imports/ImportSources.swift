import Foundation
import LanyardSupport

/// The sources `lanyard import` reads (reference section 24), each with its reader.
public enum ImportSource: String, Sendable, CaseIterable {
    case firebase, supabase, clerk, auth0, jsonl

    /// Reads a file of this source; each reader tells its formats apart by their shape.
    /// - Parameter providers: the OpenID Connect providers this server configures (names a line may use).
    public func read(_ bytes: [UInt8], options: ImportOptions, now: Date,
                     providers: Set<String> = []) throws(ImportFileError) -> ImportFile {
        switch self {
        case .firebase: try FirebaseUsers.read(bytes, options: options)
        case .supabase: try SupabaseUsers.read(bytes, options: options, now: now)
        case .clerk: try ClerkUsers.read(bytes, options: options)
        case .auth0: Auth0Users.read(bytes, options: options)
        case .jsonl: LanyardLines.read(bytes, options: options, providers: providers)
        }
    }

    /// Supabase's users as rows of its database (`SupabaseAuthReader`), each a JSON object like the export's.
    public static func supabaseRows(_ rows: [JSONValue], options: ImportOptions, now: Date) -> ImportFile {
        SupabaseUsers.read(users: rows.enumerated().map { ($0.offset + 1, $0.element) }, format: "supabase-database",
                           options: options, now: now)
    }
}

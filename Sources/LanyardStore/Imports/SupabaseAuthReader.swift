import Foundation
import LanyardSupport
import Logging

/// Reads Supabase Auth's users straight from the project's PostgreSQL (reference section 24): `auth.users` with
/// their `auth.identities`, as GoTrue's migrations leave them, each user as the JSON object the documented export
/// query writes (`docs/import-formats.md` section 2.1), times as milliseconds since 1970. Read only: nothing is
/// written to that database.
public enum SupabaseAuthReader {
    /// Users per query: the reader pages by id.
    static let pageSize = 2000

    public static func read(url: String, logger: Logger) async throws -> [JSONValue] {
        guard let location = DatabaseLocation(url: url), location.isPostgres else {
            throw StoreError.unavailable("expected a postgres:// URL of the Supabase project's database")
        }
        let database = try await DatabaseFactory.open(location, poolSize: 1, timeout: .seconds(30), logger: logger)
        do {
            var users: [JSONValue] = []
            var after = ""
            while true {
                let start = after
                let rows = try await database.read { connection in
                    try await connection.query(page, [.text(start), .integer(Int64(pageSize))])
                }
                for row in rows {
                    let text = try row.string("user")
                    guard let value = try? JSONParser.parse(Array(text.utf8)) else {
                        throw StoreError.unexpectedValue(column: "user")
                    }
                    users.append(value)
                }
                guard rows.count == pageSize, let last = rows.last else { break }
                after = try last.string("id")
            }
            await database.close()
            return users
        } catch {
            await database.close()
            throw error
        }
    }

    /// Times as milliseconds, so no session time zone or text form comes between them and the reader.
    static let page = """
        SELECT u.id::text AS id, json_build_object(
            'id', u.id, 'email', u.email, 'has_password', coalesce(u.encrypted_password, '') <> '',
            'email_confirmed_at', (extract(epoch FROM u.email_confirmed_at) * 1000)::bigint,
            'last_sign_in_at', (extract(epoch FROM u.last_sign_in_at) * 1000)::bigint,
            'created_at', (extract(epoch FROM u.created_at) * 1000)::bigint,
            'banned_until', (extract(epoch FROM u.banned_until) * 1000)::bigint,
            'deleted_at', (extract(epoch FROM u.deleted_at) * 1000)::bigint,
            'is_anonymous', u.is_anonymous, 'is_sso_user', u.is_sso_user,
            'raw_user_meta_data', u.raw_user_meta_data,
            'identities', coalesce((
                SELECT json_agg(json_build_object('provider', i.provider, 'provider_id', i.provider_id,
                                                  'identity_data', i.identity_data) ORDER BY i.created_at, i.id)
                FROM auth.identities i WHERE i.user_id = u.id), '[]'::json)
        )::text AS "user"
        FROM auth.users u WHERE u.id::text > $1 ORDER BY u.id::text LIMIT $2
        """
}

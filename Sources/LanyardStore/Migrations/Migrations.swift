/// The schema, as numbered migrations. A migration never changes after it ships; add a new one instead.
///
/// The SQL is shared by both databases; `{int}`, `{blob}` and `{id}` stand for the column types that differ,
/// `{clustered}` for SQLite's `WITHOUT ROWID` (rows stored in their text primary key's order, so an insert
/// writes one b-tree instead of a table and its key index). A statement that starts `{sqlite}` or `{postgres}`
/// runs on that database only.
public enum Migrations {
    public struct Migration: Sendable {
        public let version: Int
        public let name: String
        public let statements: [String]
    }

    public static let all: [Migration] = [
        Migration(version: 1, name: "accounts, identities, sessions, keys, audit", statements: [
            """
            CREATE TABLE users (
                id TEXT PRIMARY KEY,
                created_at {int} NOT NULL,
                updated_at {int} NOT NULL,
                last_active_at {int} NOT NULL,
                is_anonymous {int} NOT NULL,
                display_name TEXT,
                merged_into TEXT,
                merged_at {int}
            )
            """,
            "CREATE INDEX users_anonymous_idle ON users (is_anonymous, last_active_at)",
            """
            CREATE TABLE identities (
                id TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                provider TEXT NOT NULL,
                provider_user_id TEXT NOT NULL,
                email TEXT,
                email_verified {int} NOT NULL,
                is_private_email {int} NOT NULL,
                linked_at {int} NOT NULL,
                link_position {int} NOT NULL,
                last_sign_in_at {int},
                CONSTRAINT identities_provider_subject_key UNIQUE (provider, provider_user_id),
                CONSTRAINT identities_user_provider_key UNIQUE (user_id, provider)
            )
            """,
            """
            CREATE TABLE sessions (
                id TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                created_at {int} NOT NULL,
                refreshed_at {int} NOT NULL,
                expires_at {int} NOT NULL,
                auth_time {int} NOT NULL,
                amr TEXT NOT NULL,
                client_ip TEXT,
                user_agent TEXT,
                revoked_at {int},
                revoked_reason TEXT
            ){clustered}
            """,
            "CREATE INDEX sessions_user ON sessions (user_id)",
            """
            CREATE TABLE refresh_tokens (
                token_hash TEXT PRIMARY KEY,
                session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
                created_at {int} NOT NULL,
                rotated_at {int}
            ){clustered}
            """,
            "CREATE INDEX refresh_tokens_session ON refresh_tokens (session_id)",
            """
            CREATE TABLE signing_keys (
                kid TEXT PRIMARY KEY,
                algorithm TEXT NOT NULL,
                public_jwk TEXT NOT NULL,
                private_key {blob} NOT NULL,
                created_at {int} NOT NULL,
                retired_at {int}
            )
            """,
            """
            CREATE TABLE audit_log (
                id {id},
                at {int} NOT NULL,
                event TEXT NOT NULL,
                user_id TEXT,
                session_id TEXT,
                client_ip TEXT,
                details TEXT
            )
            """,
            "CREATE INDEX audit_log_user ON audit_log (user_id, at)",
            """
            CREATE TABLE rate_limits (
                bucket TEXT NOT NULL,
                window_start {int} NOT NULL,
                hits {int} NOT NULL,
                PRIMARY KEY (bucket, window_start)
            )
            """,
        ]),
        Migration(version: 2, name: "per-user data records", statements: [
            """
            CREATE TABLE records (
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                collection TEXT NOT NULL,
                record_id TEXT NOT NULL,
                version {int} NOT NULL,
                updated_at {int} NOT NULL,
                change_seq {int} NOT NULL,
                deleted {int} NOT NULL,
                data TEXT,
                PRIMARY KEY (user_id, collection, record_id)
            )
            """,
            "CREATE INDEX records_changes ON records (user_id, collection, change_seq)",
        ]),
        // Links read the account without locking it (`IdentityStore.link` checks it when it writes), so two
        // links to one account at once could both take the next place in its order: one is refused, retried
        // and takes the place after. Earlier versions locked the account, so existing rows have no ties.
        Migration(version: 3, name: "one place per identity in its account's order", statements: [
            "CREATE UNIQUE INDEX identities_user_position ON identities (user_id, link_position)",
        ]),
        // Beside `users`, not in it: the account reads of every request (`u.*`) stay as they were.
        Migration(version: 4, name: "user metadata (GoTrue's user_metadata)", statements: [
            """
            CREATE TABLE user_metadata (
                user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
                data TEXT NOT NULL,
                updated_at {int} NOT NULL
            )
            """,
        ]),
        Migration(version: 5, name: "disabled accounts; accounts by age for the admin API", statements: [
            "ALTER TABLE users ADD COLUMN disabled_at {int}",
            "CREATE INDEX users_created ON users (created_at, id)",
        ]),
        // Account events for the app's backend, written in the transaction of the change that causes them.
        Migration(version: 6, name: "webhook outbox", statements: [
            """
            CREATE TABLE webhook_events (
                id {id},
                event_id TEXT NOT NULL UNIQUE,
                user_id TEXT,
                type TEXT NOT NULL,
                payload TEXT NOT NULL,
                created_at {int} NOT NULL,
                status TEXT NOT NULL,
                attempts {int} NOT NULL,
                next_attempt_at {int} NOT NULL,
                locked_until {int},
                last_attempt_at {int},
                last_status {int},
                last_error TEXT,
                delivered_at {int}
            )
            """,
            "CREATE INDEX webhook_events_due ON webhook_events (status, next_attempt_at)",
            "CREATE INDEX webhook_events_account ON webhook_events (user_id, id)",
        ]),
        // Apple's refresh tokens (sealed with the master key) and the revocations owed to Apple.
        Migration(version: 7, name: "Apple account lifecycle", statements: [
            """
            CREATE TABLE apple_tokens (
                identity_id TEXT PRIMARY KEY REFERENCES identities (id) ON DELETE CASCADE,
                client_id TEXT NOT NULL,
                sealed_token {blob} NOT NULL,
                updated_at {int} NOT NULL
            )
            """,
            """
            CREATE TABLE apple_revocations (
                id {id},
                user_id TEXT,
                client_id TEXT NOT NULL,
                sealed_token {blob},
                created_at {int} NOT NULL,
                status TEXT NOT NULL,
                attempts {int} NOT NULL,
                next_attempt_at {int} NOT NULL,
                locked_until {int},
                last_error TEXT,
                revoked_at {int}
            )
            """,
            "CREATE INDEX apple_revocations_due ON apple_revocations (status, next_attempt_at)",
        ]),
        Migration(version: 8, name: "Apple server-to-server notifications", statements: [
            "CREATE TABLE apple_notifications (jti TEXT PRIMARY KEY, type TEXT NOT NULL, received_at {int} NOT NULL)",
            """
            CREATE TABLE apple_identity_state (
                identity_id TEXT PRIMARY KEY REFERENCES identities (id) ON DELETE CASCADE,
                consent_revoked_at {int},
                email_forwarding TEXT
            )
            """,
        ]),
        // One feed per account across its collections (reference section 13): each write takes the account's next
        // place, under the account row's lock as the per-collection `change_seq` does. Existing records are given
        // places in the order they were last written.
        Migration(version: 9, name: "one change feed per account", statements: [
            "ALTER TABLE records ADD COLUMN feed_seq {int} NOT NULL DEFAULT 0",
            """
            UPDATE records SET feed_seq = (
                SELECT ranked.n FROM (
                    SELECT user_id, collection, record_id,
                           ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY updated_at, collection, change_seq) AS n
                    FROM records
                ) ranked
                WHERE ranked.user_id = records.user_id AND ranked.collection = records.collection
                  AND ranked.record_id = records.record_id)
            """,
            "CREATE UNIQUE INDEX records_feed ON records (user_id, feed_seq)",
        ]),
        // Groups (reference section 14). One owner per group is a unique index, so no interleaving of transfers,
        // deletions and joins can leave two. Group records mirror `records`, keyed by the group: the same versions,
        // tombstones and per-collection cursors, and a feed sequence per group that the change feed reads.
        // `users.group_claims` is the access token's `groups` claim kept ready ("<group>:<role>,…", oldest
        // membership first), rewritten by every membership change: sign-in and refresh read it with the account
        // row they already read, so accounts without groups pay nothing for the claim.
        Migration(version: 10, name: "groups for family sharing", statements: [
            "ALTER TABLE users ADD COLUMN group_claims TEXT",
            """
            CREATE TABLE groups (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                kind TEXT NOT NULL,
                on_owner_deleted TEXT NOT NULL,
                members_can_invite {int} NOT NULL,
                created_at {int} NOT NULL,
                updated_at {int} NOT NULL
            )
            """,
            """
            CREATE TABLE group_members (
                group_id TEXT NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                role TEXT NOT NULL,
                joined_at {int} NOT NULL,
                share_email {int} NOT NULL DEFAULT 0,
                PRIMARY KEY (group_id, user_id)
            )
            """,
            "CREATE UNIQUE INDEX group_members_one_owner ON group_members (group_id) WHERE role = 'owner'",
            "CREATE INDEX group_members_by_user ON group_members (user_id, joined_at)",
            """
            CREATE TABLE group_invites (
                id TEXT PRIMARY KEY,
                group_id TEXT NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
                code_hash TEXT NOT NULL UNIQUE,
                role TEXT NOT NULL,
                max_uses {int} NOT NULL,
                uses {int} NOT NULL DEFAULT 0,
                created_by TEXT NOT NULL,
                created_at {int} NOT NULL,
                expires_at {int} NOT NULL,
                revoked_at {int}
            )
            """,
            "CREATE INDEX group_invites_by_group ON group_invites (group_id, created_at)",
            """
            CREATE TABLE group_records (
                group_id TEXT NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
                collection TEXT NOT NULL,
                record_id TEXT NOT NULL,
                version {int} NOT NULL,
                updated_at {int} NOT NULL,
                change_seq {int} NOT NULL,
                feed_seq {int} NOT NULL,
                deleted {int} NOT NULL,
                data TEXT,
                created_by TEXT NOT NULL,
                updated_by TEXT NOT NULL,
                PRIMARY KEY (group_id, collection, record_id)
            )
            """,
            "CREATE INDEX group_records_changes ON group_records (group_id, collection, change_seq)",
            "CREATE UNIQUE INDEX group_records_feed ON group_records (group_id, feed_seq)",
            """
            CREATE TABLE group_policies (
                group_id TEXT NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
                collection TEXT NOT NULL,
                read_role TEXT NOT NULL,
                write_role TEXT NOT NULL,
                PRIMARY KEY (group_id, collection)
            )
            """,
            """
            CREATE TABLE group_shares (
                group_id TEXT NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                collection TEXT NOT NULL,
                shared_at {int} NOT NULL,
                PRIMARY KEY (group_id, user_id, collection)
            )
            """,
        ]),
        // Merging two full accounts (reference section 15): single-use challenges bound to a session, each merge's
        // report (the same Idempotency-Key or proof answers it again), and the versions that lost a clash, kept 30
        // days (written before their merge's row, whose report they are part of: no foreign key). An account is
        // absorbed at most once while its merge stands (a unique index), so A into B and B into A racing end in one
        // merge.
        Migration(version: 11, name: "merging two full accounts", statements: [
            """
            CREATE TABLE merge_challenges (
                id TEXT PRIMARY KEY,
                session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
                nonce TEXT NOT NULL,
                created_at {int} NOT NULL,
                expires_at {int} NOT NULL,
                used_at {int}
            )
            """,
            "CREATE INDEX merge_challenges_by_session ON merge_challenges (session_id, created_at)",
            """
            CREATE TABLE merges (
                id TEXT PRIMARY KEY,
                into_id TEXT NOT NULL,
                from_id TEXT NOT NULL,
                kind TEXT NOT NULL,
                actor TEXT NOT NULL,
                requested_by TEXT,
                idempotency_key TEXT,
                proof_key TEXT,
                created_at {int} NOT NULL,
                report TEXT NOT NULL,
                undo TEXT NOT NULL,
                reverted_at {int}
            )
            """,
            "CREATE UNIQUE INDEX merges_idempotency ON merges (requested_by, idempotency_key) WHERE idempotency_key IS NOT NULL",
            "CREATE UNIQUE INDEX merges_proof ON merges (proof_key) WHERE proof_key IS NOT NULL",
            "CREATE UNIQUE INDEX merges_absorbed_once ON merges (from_id) WHERE reverted_at IS NULL",
            "CREATE INDEX merges_into ON merges (into_id, created_at)",
            """
            CREATE TABLE merge_losers (
                merge_id TEXT NOT NULL,
                collection TEXT NOT NULL,
                record_id TEXT NOT NULL,
                account_id TEXT NOT NULL,
                version {int} NOT NULL,
                updated_at {int} NOT NULL,
                deleted {int} NOT NULL,
                data TEXT,
                PRIMARY KEY (merge_id, collection, record_id)
            )
            """,
            "ALTER TABLE users ADD COLUMN merge_kind TEXT",
        ]),
        // Merges answered again only to the session that asked, with the same body, for a day and never after a
        // revert; guest merges recorded like full ones. Webhook events that name a second account (a merge's) wait
        // for that account's earlier events too.
        Migration(version: 12, name: "replays bound to their request; events naming two accounts", statements: [
            "ALTER TABLE merges ADD COLUMN requested_session TEXT",
            "ALTER TABLE merges ADD COLUMN request_hash TEXT",
            "ALTER TABLE merges ADD COLUMN opened_session TEXT",
            "ALTER TABLE webhook_events ADD COLUMN related_user_id TEXT",
            "CREATE INDEX webhook_events_related ON webhook_events (related_user_id, id) WHERE related_user_id IS NOT NULL",
        ]),
        // Email codes and links (reference section 18): a flow per mail (codes, link tokens and the device's secret
        // stored only as keyed hashes; the link token's hash unique), counters for the per-address, per-IP and
        // deployment-wide limits, and the mail outbox (one mail per flow: the unique flow id; the body sealed under
        // the master key and erased once sent).
        Migration(version: 13, name: "email codes and links", statements: [
            """
            CREATE TABLE email_flows (
                id TEXT PRIMARY KEY,
                address TEXT NOT NULL,
                intent TEXT NOT NULL,
                origin TEXT NOT NULL,
                secret_hash TEXT,
                code_hash TEXT NOT NULL,
                link_hash TEXT,
                match_number {int} NOT NULL,
                user_id TEXT,
                session_id TEXT,
                redirect_to TEXT,
                client_ip TEXT,
                user_agent TEXT,
                create_user {int} NOT NULL,
                wrong_codes {int} NOT NULL,
                created_at {int} NOT NULL,
                expires_at {int} NOT NULL,
                confirmed_at {int},
                used_at {int},
                undeliverable_at {int}
            )
            """,
            "CREATE UNIQUE INDEX email_flows_link ON email_flows (link_hash) WHERE link_hash IS NOT NULL",
            "CREATE INDEX email_flows_address ON email_flows (address, created_at)",
            """
            CREATE TABLE email_limits (
                key TEXT PRIMARY KEY,
                window_start {int} NOT NULL,
                count {int} NOT NULL,
                last_at {int} NOT NULL
            )
            """,
            """
            CREATE TABLE email_deliveries (
                id {id},
                flow_id TEXT NOT NULL UNIQUE,
                recipient TEXT NOT NULL,
                user_id TEXT,
                intent TEXT NOT NULL,
                sealed_body {blob},
                status TEXT NOT NULL,
                attempts {int} NOT NULL,
                next_attempt_at {int} NOT NULL,
                locked_until {int},
                last_error TEXT,
                created_at {int} NOT NULL,
                sent_at {int},
                failed_at {int}
            )
            """,
            "CREATE INDEX email_deliveries_due ON email_deliveries (status, next_attempt_at)",
            "CREATE INDEX email_deliveries_recipient ON email_deliveries (recipient, id)",
        ]),
        // Passkeys (reference section 19): an account may hold several passkey identities, so one identity per
        // provider per account becomes a partial index that leaves `passkey` out. SQLite cannot drop a table's
        // constraint, and the connection enforces foreign keys (which a transaction cannot turn off): the table is
        // rebuilt, and so are the two tables that reference it, whose references the rename moved to the old one
        // (dropping it then cascades nowhere). Each passkey's key and counter sit beside its identity; challenges
        // are single-use rows.
        Migration(version: 14, name: "passkeys", statements: [
            "{sqlite}ALTER TABLE identities RENAME TO identities_before_passkeys",
            """
            {sqlite}CREATE TABLE identities (
                id TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                provider TEXT NOT NULL,
                provider_user_id TEXT NOT NULL,
                email TEXT,
                email_verified {int} NOT NULL,
                is_private_email {int} NOT NULL,
                linked_at {int} NOT NULL,
                link_position {int} NOT NULL,
                last_sign_in_at {int},
                CONSTRAINT identities_provider_subject_key UNIQUE (provider, provider_user_id)
            )
            """,
            """
            {sqlite}INSERT INTO identities (id, user_id, provider, provider_user_id, email, email_verified, is_private_email,
                linked_at, link_position, last_sign_in_at)
            SELECT id, user_id, provider, provider_user_id, email, email_verified, is_private_email, linked_at,
                link_position, last_sign_in_at FROM identities_before_passkeys
            """,
            "{sqlite}ALTER TABLE apple_tokens RENAME TO apple_tokens_before_passkeys",
            """
            {sqlite}CREATE TABLE apple_tokens (
                identity_id TEXT PRIMARY KEY REFERENCES identities (id) ON DELETE CASCADE,
                client_id TEXT NOT NULL,
                sealed_token {blob} NOT NULL,
                updated_at {int} NOT NULL
            )
            """,
            """
            {sqlite}INSERT INTO apple_tokens (identity_id, client_id, sealed_token, updated_at)
            SELECT identity_id, client_id, sealed_token, updated_at FROM apple_tokens_before_passkeys
            """,
            "{sqlite}DROP TABLE apple_tokens_before_passkeys",
            "{sqlite}ALTER TABLE apple_identity_state RENAME TO apple_identity_state_before_passkeys",
            """
            {sqlite}CREATE TABLE apple_identity_state (
                identity_id TEXT PRIMARY KEY REFERENCES identities (id) ON DELETE CASCADE,
                consent_revoked_at {int},
                email_forwarding TEXT
            )
            """,
            """
            {sqlite}INSERT INTO apple_identity_state (identity_id, consent_revoked_at, email_forwarding)
            SELECT identity_id, consent_revoked_at, email_forwarding FROM apple_identity_state_before_passkeys
            """,
            "{sqlite}DROP TABLE apple_identity_state_before_passkeys",
            "{sqlite}DROP TABLE identities_before_passkeys",
            "{sqlite}CREATE UNIQUE INDEX identities_user_position ON identities (user_id, link_position)",
            "{postgres}ALTER TABLE identities DROP CONSTRAINT identities_user_provider_key",
            "CREATE UNIQUE INDEX identities_user_provider ON identities (user_id, provider) WHERE provider <> 'passkey'",
            """
            CREATE TABLE passkeys (
                identity_id TEXT PRIMARY KEY REFERENCES identities (id) ON DELETE CASCADE,
                user_handle TEXT NOT NULL,
                public_key TEXT NOT NULL,
                algorithm {int} NOT NULL,
                sign_count {int} NOT NULL,
                name TEXT NOT NULL,
                aaguid TEXT NOT NULL,
                transports TEXT,
                backup_eligible {int} NOT NULL,
                backed_up {int} NOT NULL,
                created_at {int} NOT NULL,
                last_used_at {int}
            )
            """,
            """
            CREATE TABLE passkey_challenges (
                challenge_hash TEXT PRIMARY KEY,
                purpose TEXT NOT NULL,
                user_id TEXT,
                session_id TEXT,
                user_handle TEXT,
                expires_at {int} NOT NULL
            )
            """,
            "CREATE INDEX passkey_challenges_expiry ON passkey_challenges (expires_at)",
        ]),
        // The link's confirm page takes one typed number (reference section 25): a wrong one ends the link, not the
        // flow (its code keeps its own tries).
        Migration(version: 15, name: "an email link answers one number", statements: [
            "ALTER TABLE email_flows ADD COLUMN link_ended_at {int}",
        ]),
        // Redirect sign-in (reference section 23): the flow lives in a row (its id is the provider's `state`),
        // never in a cookie; after the callback it holds the proven identity, sealed, under a single-use code's hash.
        Migration(version: 16, name: "redirect sign-in", statements: [
            """
            CREATE TABLE redirect_flows (
                id TEXT PRIMARY KEY,
                provider TEXT NOT NULL,
                origin TEXT NOT NULL,
                intent TEXT NOT NULL,
                redirect_uri TEXT NOT NULL,
                code_challenge TEXT NOT NULL,
                client_state TEXT,
                nonce TEXT NOT NULL,
                user_id TEXT,
                session_id TEXT,
                created_at {int} NOT NULL,
                expires_at {int} NOT NULL,
                called_back_at {int},
                code_hash TEXT,
                code_expires_at {int},
                sealed_identity {blob},
                used_at {int}
            )
            """,
            "CREATE UNIQUE INDEX redirect_flows_code ON redirect_flows (code_hash) WHERE code_hash IS NOT NULL",
            "CREATE INDEX redirect_flows_expiry ON redirect_flows (expires_at)",
        ]),
        // Switching day (reference section 24): an account may carry the id another system knew it by, unique per
        // source (the bridge's race ends on this index); imported accounts name their batch, so `undo` removes
        // exactly those. Partial indexes: the accounts Lanyard makes itself carry neither and cost nothing.
        Migration(version: 17, name: "legacy ids and import batches", statements: [
            "ALTER TABLE users ADD COLUMN legacy_source TEXT",
            "ALTER TABLE users ADD COLUMN legacy_id TEXT",
            "ALTER TABLE users ADD COLUMN import_batch TEXT",
            "CREATE UNIQUE INDEX users_legacy_id ON users (legacy_id, legacy_source) WHERE legacy_id IS NOT NULL",
            "CREATE INDEX users_import_batch ON users (import_batch) WHERE import_batch IS NOT NULL",
            """
            CREATE TABLE import_batches (
                id TEXT PRIMARY KEY,
                source TEXT NOT NULL,
                format TEXT NOT NULL,
                origin TEXT NOT NULL,
                actor TEXT NOT NULL,
                started_at {int} NOT NULL,
                finished_at {int},
                accounts_created {int} NOT NULL,
                report TEXT NOT NULL,
                undone_at {int},
                accounts_removed {int}
            )
            """,
            "CREATE INDEX import_batches_started ON import_batches (started_at)",
        ]),
    ]

    /// The statement as `dialect` runs it; nil when it is marked (`{sqlite}`, `{postgres}`) for the other one.
    static func render(_ statement: String, for dialect: SQLDialect) -> String? {
        for (mark, only) in [("{sqlite}", SQLDialect.sqlite), ("{postgres}", .postgres)] where statement.hasPrefix(mark) {
            return only == dialect ? render(String(statement.dropFirst(mark.count)), for: dialect) : nil
        }
        switch dialect {
        case .sqlite:
            return statement
                .replacingOccurrences(of: "{int}", with: "INTEGER")
                .replacingOccurrences(of: "{blob}", with: "BLOB")
                .replacingOccurrences(of: "{id}", with: "INTEGER PRIMARY KEY AUTOINCREMENT")
                .replacingOccurrences(of: "{clustered}", with: " WITHOUT ROWID")
        case .postgres:
            return statement
                .replacingOccurrences(of: "{int}", with: "BIGINT")
                .replacingOccurrences(of: "{blob}", with: "BYTEA")
                .replacingOccurrences(of: "{id}", with: "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY")
                .replacingOccurrences(of: "{clustered}", with: "")
        }
    }
}

import Foundation

public struct SigningKeyRecord: Sendable, Equatable {
    public var kid: String
    public var algorithm: String
    public var publicJWK: String
    /// The private key, sealed with the master key.
    public var sealedPrivateKey: [UInt8]
    public var createdAt: Date
    public var retiredAt: Date?

    public init(kid: String, algorithm: String, publicJWK: String, sealedPrivateKey: [UInt8], createdAt: Date, retiredAt: Date? = nil) {
        self.kid = kid
        self.algorithm = algorithm
        self.publicJWK = publicJWK
        self.sealedPrivateKey = sealedPrivateKey
        self.createdAt = createdAt
        self.retiredAt = retiredAt
    }

    init(row: SQLRow) throws {
        kid = try row.string("kid")
        algorithm = try row.string("algorithm")
        publicJWK = try row.string("public_jwk")
        sealedPrivateKey = try row.bytes("private_key")
        createdAt = try row.date("created_at")
        retiredAt = try row.optionalDate("retired_at")
    }
}

/// The `signing_keys` table: Lanyard's own access-token keys, shared by every instance.
public struct SigningKeyStore: Sendable {
    let connection: any DatabaseConnection

    public init(_ connection: any DatabaseConnection) {
        self.connection = connection
    }

    /// All keys, oldest first.
    public func all() async throws -> [SigningKeyRecord] {
        try await connection.query("SELECT * FROM signing_keys ORDER BY created_at, kid").map(SigningKeyRecord.init(row:))
    }

    public func insert(_ key: SigningKeyRecord) async throws {
        try await connection.query("""
            INSERT INTO signing_keys (kid, algorithm, public_jwk, private_key, created_at, retired_at)
            VALUES ($1, $2, $3, $4, $5, $6)
            """, [.text(key.kid), .text(key.algorithm), .text(key.publicJWK), .blob(key.sealedPrivateKey),
                  .date(key.createdAt), .optionalDate(key.retiredAt)])
    }

    public func retire(kid: String, at date: Date) async throws {
        try await connection.query("UPDATE signing_keys SET retired_at = $2 WHERE kid = $1 AND retired_at IS NULL",
                                   [.text(kid), .date(date)])
    }

    /// Deletes retired keys whose tokens have all expired.
    public func deleteRetired(before cutoff: Date) async throws {
        try await connection.query("DELETE FROM signing_keys WHERE retired_at IS NOT NULL AND retired_at < $1", [.date(cutoff)])
    }
}

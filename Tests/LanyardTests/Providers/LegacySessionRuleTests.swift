import Foundation
import LanyardSupport
import Testing
@testable import LanyardProviders

/// The bridge's token rules that need no signature (`docs/bridge-tokens.md`): what a verified token's claims must say.
@Suite struct LegacySessionRuleTests {
    static let now: TimeInterval = 1_800_000_000

    static func clerk(_ extra: [String: JSONValue], dropping: [String] = []) -> [String: JSONValue] {
        var claims: [String: JSONValue] = ["sub": "user_2wMzzuVtYkwMJFrCfZ4U2EqkNk6", "sid": "sess_2wN0hDqL8Ckzdh2V8RyeBbLkJ1p",
                                           "iat": .number(now - 5), "exp": .number(now + 55), "nbf": .number(now - 15)]
        for (key, value) in extra { claims[key] = value }
        for key in dropping { claims[key] = nil }
        return claims
    }

    func reason(_ body: () throws(ProviderTokenError) -> VerifiedLegacySession) -> ProviderTokenError.Reason? {
        do {
            _ = try body()
            return nil
        } catch {
            return error.reason
        }
    }

    @Test func aClerkSessionTokenNamesItsSessionAndAJWTTemplatesTokenIsRefused() {
        #expect(reason { () throws(ProviderTokenError) in try LegacySessionVerifier.clerk(Self.clerk([:]), issuer: nil, now: Self.now) } == nil)
        // A template's token (getToken({ template })) need carry no session, and may live long: it is for another
        // service, which could replay it here.
        #expect(reason { () throws(ProviderTokenError) in
            try LegacySessionVerifier.clerk(Self.clerk([:], dropping: ["sid"]), issuer: nil, now: Self.now)
        } == .subject)
        #expect(reason { () throws(ProviderTokenError) in
            try LegacySessionVerifier.clerk(Self.clerk(["sid": "not-a-session"]), issuer: nil, now: Self.now)
        } == .subject)
        #expect(reason { () throws(ProviderTokenError) in
            try LegacySessionVerifier.clerk(Self.clerk(["aud": "https://api.example.com"]), issuer: nil, now: Self.now)
        } == .audience)
    }

    @Test func aFirebaseCrossingCarriesTheTimeThePersonSignedIn() throws {
        let claims: [String: JSONValue] = [
            "iss": "https://securetoken.google.com/p", "aud": "p", "sub": "uid-1", "user_id": "uid-1",
            "iat": .number(Self.now - 60), "exp": .number(Self.now + 3540), "auth_time": .number(Self.now - 7200),
            "firebase": .object(["sign_in_provider": "google.com", "identities": .object(["google.com": .array(["g-1"])])]),
        ]
        let session = try LegacySessionVerifier.firebase(claims, project: "p", now: Self.now)
        #expect(session.signedInAt == Date(timeIntervalSince1970: Self.now - 7200))
    }
}

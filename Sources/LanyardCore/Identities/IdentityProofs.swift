import Foundation
import LanyardProviders
import LanyardWire

/// Verifies an `IdentityProof` of any kind: the one place an ID token, an email flow's code or a passkey's
/// assertion becomes a `VerifiedIdentity` (reference section 17). Sign-in, linking, re-authentication and a merge's
/// proof of the other account take what it answers; a new kind of identity adds its case here, and nothing
/// downstream changes.
struct IdentityProofs: Sendable {
    let dependencies: CoreDependencies

    init(_ dependencies: CoreDependencies) {
        self.dependencies = dependencies
    }

    func verify(_ proof: IdentityProof, client: ClientInfo) async throws -> VerifiedIdentity {
        switch proof {
        case .idToken(let provider, let idToken, let nonce):
            try await dependencies.providerTokens.verify(idToken, provider: provider, nonce: nonce)
        case .emailCode(let flowID, let flowSecret, let code):
            try await EmailFlows(dependencies).prove(EmailProof(flowID: flowID, flowSecret: flowSecret, code: code))
        case .passkey(let assertion):
            try await Passkeys(dependencies).prove(assertion, client: client)
        case .legacySession(let source, _):
            // An old system's session proves an account there, not an identity: nothing but the bridge takes it.
            throw LanyardError.unsupportedProvider(source.rawValue)
        }
    }

    /// The bridge's proof (reference section 24): the old system's session, verified with its keys.
    func verifyLegacySession(_ proof: IdentityProof) async throws -> VerifiedLegacySession {
        guard case .legacySession(let source, let token) = proof else { throw LanyardError.unsupportedProvider(proof.provider.rawValue) }
        return try await dependencies.legacySessions.verify(token, source: source)
    }

    /// What makes a proof this one, whatever else a request carries: the email flow, the passkey's signed client
    /// data (its challenge), or the token. A merge sent again with the same proof answers the same merge.
    static func fingerprint(_ proof: IdentityProof) -> String {
        switch proof {
        case .idToken(_, let idToken, _): idToken
        case .emailCode(let flowID, _, _): "email:" + flowID
        case .passkey(let assertion): "passkey:" + assertion.response.clientDataJSON
        case .legacySession(let source, let token): source.rawValue + ":" + token
        }
    }

    /// The whole proof as text, for a request's hash (an `Idempotency-Key` sent again must come with the same body).
    static func text(_ proof: IdentityProof) -> String {
        (try? WireCoding.encoder().encode(proof)).map { String(decoding: $0, as: UTF8.self) } ?? fingerprint(proof)
    }
}

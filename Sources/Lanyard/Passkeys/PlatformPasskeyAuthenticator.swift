#if canImport(AuthenticationServices) && (os(iOS) || os(macOS) || os(visionOS))
import AuthenticationServices
import Foundation

/// Passkeys through AuthenticationServices: iCloud Keychain (Face ID, Touch ID) and security keys. The app needs
/// the Associated Domains entitlement `webcredentials:<your Lanyard domain>`; Lanyard serves the
/// `apple-app-site-association` file itself (`LANYARD_APPLE_APP_IDS`).
///
/// ```swift
/// let authenticator = PlatformPasskeyAuthenticator(anchor: view.window!)
/// try await client.passkeys.register(name: "iPhone", with: authenticator)
/// let result = try await client.passkeys.signIn(with: authenticator)
/// ```
@available(iOS 16.0, macOS 13.0, visionOS 1.0, *)
@MainActor
public final class PlatformPasskeyAuthenticator: PasskeyAuthenticator {
    private let anchor: ASPresentationAnchor

    /// - Parameter anchor: the window the system sheet is shown over.
    public init(anchor: ASPresentationAnchor) {
        self.anchor = anchor
    }

    public func create(_ options: PublicKeyCredentialCreationOptionsJSON) async throws -> RegistrationResponseJSON {
        guard let challenge = Data(base64URLEncoded: options.challenge), let userID = Data(base64URLEncoded: options.user.id) else {
            throw LanyardError.invalidPasskey(reason: "malformed")
        }
        let credential = try await AuthorizationRun.perform(anchor: anchor) {
            let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: options.rp.id)
            let request = provider.createCredentialRegistrationRequest(challenge: challenge, name: options.user.name, userID: userID)
            request.userVerificationPreference = ASAuthorizationPublicKeyCredentialUserVerificationPreference(
                rawValue: options.authenticatorSelection.userVerification)
            return request
        }
        guard let registration = credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration,
              let attestation = registration.rawAttestationObject else {
            throw LanyardError.invalidPasskey(reason: "malformed")
        }
        return RegistrationResponseJSON(
            id: registration.credentialID.base64URLEncoded,
            response: .init(clientDataJSON: registration.rawClientDataJSON.base64URLEncoded,
                            attestationObject: attestation.base64URLEncoded, transports: ["internal", "hybrid"]),
            authenticatorAttachment: "platform")
    }

    public func get(_ options: PublicKeyCredentialRequestOptionsJSON) async throws -> AuthenticationResponseJSON {
        guard let challenge = Data(base64URLEncoded: options.challenge) else { throw LanyardError.invalidPasskey(reason: "malformed") }
        let credential = try await AuthorizationRun.perform(anchor: anchor) {
            let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: options.rpId)
            let request = provider.createCredentialAssertionRequest(challenge: challenge)
            request.userVerificationPreference = ASAuthorizationPublicKeyCredentialUserVerificationPreference(
                rawValue: options.userVerification)
            return request
        }
        guard let assertion = credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion else {
            throw LanyardError.invalidPasskey(reason: "malformed")
        }
        return AuthenticationResponseJSON(
            id: assertion.credentialID.base64URLEncoded,
            response: .init(clientDataJSON: assertion.rawClientDataJSON.base64URLEncoded,
                            authenticatorData: assertion.rawAuthenticatorData.base64URLEncoded,
                            signature: assertion.signature.base64URLEncoded, userHandle: assertion.userID.base64URLEncoded),
            authenticatorAttachment: "platform")
    }
}

@available(iOS 16.0, macOS 13.0, visionOS 1.0, *)
extension LanyardClient {
    /// Signs in with one of the person's passkeys through the system sheet (AuthenticationServices).
    ///
    /// ```swift
    /// let result = try await client.signInWithPasskey(anchor: view.window!)
    /// ```
    @MainActor
    @discardableResult
    public func signInWithPasskey(anchor: ASPresentationAnchor) async throws -> SignInResult {
        try await passkeys.signIn(with: PlatformPasskeyAuthenticator(anchor: anchor))
    }
}

@available(iOS 16.0, macOS 13.0, visionOS 1.0, *)
extension PasskeyAuth {
    /// Makes a passkey in iCloud Keychain (or on a security key) for the signed-in account.
    ///
    /// ```swift
    /// try await client.passkeys.register(name: "iPhone", anchor: view.window!)
    /// ```
    @MainActor
    @discardableResult
    public func register(name: String? = nil, anchor: ASPresentationAnchor) async throws -> Passkey {
        try await register(name: name, with: PlatformPasskeyAuthenticator(anchor: anchor))
    }
}

/// One `ASAuthorizationController` run, its delegate callbacks turned into an answer.
@available(iOS 16.0, macOS 13.0, visionOS 1.0, *)
@MainActor
private final class AuthorizationRun: NSObject, ASAuthorizationControllerDelegate, ASAuthorizationControllerPresentationContextProviding {
    private let anchor: ASPresentationAnchor
    private var continuation: CheckedContinuation<any ASAuthorizationCredential, any Error>?

    private init(anchor: ASPresentationAnchor) {
        self.anchor = anchor
    }

    static func perform(anchor: ASPresentationAnchor,
                        _ makeRequest: @MainActor () -> ASAuthorizationRequest) async throws -> any ASAuthorizationCredential {
        let run = AuthorizationRun(anchor: anchor)
        return try await withCheckedThrowingContinuation { continuation in
            run.continuation = continuation
            let controller = ASAuthorizationController(authorizationRequests: [makeRequest()])
            controller.delegate = run
            controller.presentationContextProvider = run
            controller.performRequests()
        }
    }

    nonisolated func authorizationController(controller: ASAuthorizationController,
                                             didCompleteWithAuthorization authorization: ASAuthorization) {
        MainActor.assumeIsolated {
            continuation?.resume(returning: authorization.credential)
            continuation = nil
        }
    }

    nonisolated func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {
        MainActor.assumeIsolated {
            continuation?.resume(throwing: error)
            continuation = nil
        }
    }

    nonisolated func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor {
        MainActor.assumeIsolated { anchor }
    }
}

extension Data {
    init?(base64URLEncoded text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }

    var base64URLEncoded: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
#endif

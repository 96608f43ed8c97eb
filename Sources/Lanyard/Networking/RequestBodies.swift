import Foundation

extension SignInBody {
    /// A sign-in's body from what the provider's SDK handed the app.
    init(_ credential: ProviderCredential, fullName: PersonNameComponents?) {
        self.init(idToken: credential.idToken, nonce: credential.nonce, givenName: fullName?.givenName,
                  familyName: fullName?.familyName, authorizationCode: credential.authorizationCode)
    }
}

extension ProviderTokenBody {
    /// A link's or re-authentication's body from what the provider's SDK handed the app.
    init(_ credential: ProviderCredential) {
        self.init(idToken: credential.idToken, nonce: credential.nonce, authorizationCode: credential.authorizationCode)
    }
}

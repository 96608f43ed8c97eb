#if canImport(SwiftUI) && canImport(AuthenticationServices)
import AuthenticationServices
import Lanyard
import SwiftUI

/// A Settings screen with the account's sign-in methods and Link / Unlink buttons (docs/guides/ios-app.md, "The Swift SDK").
/// Google Sign-In's own SDK is not a dependency here: `googleIDToken` stands for the app's call into it.
@available(iOS 17, macOS 14, *)
public struct LinkedAccountsSettings: View {
    @Environment(LanyardAuthModel.self) private var auth
    @State private var message: String?
    @State private var nonce = AppleNonce()
    private let googleIDToken: () async throws -> String

    public init(googleIDToken: @escaping () async throws -> String) {
        self.googleIDToken = googleIDToken
    }

    public var body: some View {
        Form {
            Section("Sign-in methods") {
                ForEach(auth.linkedProviders, id: \.provider) { method in
                    HStack {
                        VStack(alignment: .leading) {
                            Text(method.provider.displayName)
                            if let email = method.email { Text(email).font(.caption).foregroundStyle(.secondary) }
                        }
                        // As seed 001's settings screen: the method the account was created with, and the others.
                        Text(method.isPrimary ? "Primary" : "Linked").font(.caption).foregroundStyle(.secondary)
                        Spacer()
                        Button("Unlink", role: .destructive) { run { try await auth.client.unlink(method.provider) } }
                            .disabled(auth.linkedProviders.count < 2)
                    }
                }
            }
            Section("Add a method") {
                if !(auth.user?.isLinked(.apple) ?? true) {
                    SignInWithAppleButton(.continue) { request in
                        request.nonce = nonce.hashed
                    } onCompletion: { result in
                        guard case .success(let authorization) = result,
                              let credential = authorization.credential as? ASAuthorizationAppleIDCredential,
                              let token = credential.identityToken else { return }
                        let raw = nonce.raw
                        run { try await auth.client.link(.apple(idToken: String(decoding: token, as: UTF8.self), rawNonce: raw)) }
                    }
                    .frame(height: 44)
                }
                if !(auth.user?.isLinked(.google) ?? true) {
                    Button("Link Google") { run { try await auth.client.link(.google(idToken: try await googleIDToken())) } }
                }
            }
            if let message { Section { Text(message).foregroundStyle(.red) } }
        }
    }

    private func run(_ action: @escaping @MainActor () async throws -> Void) {
        Task { @MainActor in
            do {
                try await action()
                message = nil
                nonce = AppleNonce()
            } catch let error as LanyardError {
                message = error.errorDescription
            } catch {
                message = error.localizedDescription
            }
        }
    }
}
#endif

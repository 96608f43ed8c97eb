// Apple platforms only. NOT COMPILED IN THIS REPOSITORY: its build machine runs Linux, where AuthenticationServices
// does not exist. Written against the documented API of ASWebAuthenticationSession (iOS 12+, macOS 10.15+, visionOS;
// `Callback.https(host:path:)` from iOS 17.4 / macOS 14.4) and built by an app's own Xcode project. tvOS has no
// ASWebAuthenticationSession and watchOS no presentation anchor, hence the platform list. The core it only opens and
// hands over, `authorizationURL(for:redirectURI:intent:)` and `completeSignIn(from:)`, is compiled and tested here
// (SDKRedirectSignInTests) against a real server whose emulated provider pages are followed over HTTP.
#if canImport(AuthenticationServices) && (os(iOS) || os(macOS) || os(visionOS))
import AuthenticationServices
import Foundation

extension LanyardClient {
    /// Redirect sign-in in an `ASWebAuthenticationSession` (reference section 23): `provider`'s own sign-in page
    /// opens in a secure browser sheet over `presentationAnchor`, comes back through Lanyard to `redirectURI`, and
    /// its code is traded for a session, as `completeSignIn(from:)` does (a held guest is upgraded or merged; with
    /// `.link` the provider joins the signed-in account).
    ///
    /// For providers without a native SDK in the app: a company's Microsoft tenant, any OpenID Connect provider the
    /// server offers. (Sign in with Apple on an Apple device is the native button and `signInWithApple`.)
    ///
    /// `redirectURI` is the app's own scheme (`com.example.app:/callback`; no `Info.plist` entry is needed, the
    /// session catches it) or, from iOS 17.4 / macOS 14.4, a universal link (`https://app.example.com/callback`,
    /// with the associated domain). List it, exactly, in the server's `LANYARD_REDIRECT_URIS`.
    ///
    /// Throws `LanyardError.signInCancelled` when the person closes the sheet or declines at the provider, and what
    /// `completeSignIn(from:)` throws. Cancelling the calling task closes the sheet.
    ///
    /// ```swift
    /// Button("Sign in with Microsoft") {
    ///     Task {
    ///         do {
    ///             let result = try await client.signIn(with: .microsoft,
    ///                                                  redirectURI: URL(string: "com.example.app:/callback")!,
    ///                                                  presentationAnchor: window)
    ///             showHome(result.user)
    ///         } catch LanyardError.signInCancelled {
    ///             // stay on the sign-in screen
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - provider: a provider the server offers by redirect (`client.providers()`).
    ///   - redirectURI: where the provider comes back to, through Lanyard.
    ///   - presentationAnchor: the window the sheet is shown over.
    ///   - intent: `.signIn` (default) or `.link`, which adds the provider to the signed-in account.
    ///   - prefersEphemeralWebBrowserSession: true to share no cookies with Safari (the person signs in at the
    ///     provider every time, and iOS asks no "wants to use … to sign in" question).
    @MainActor
    @discardableResult
    public func signIn(with provider: Provider, redirectURI: URL, presentationAnchor: ASPresentationAnchor,
                       intent: RedirectIntent = .signIn,
                       prefersEphemeralWebBrowserSession: Bool = false) async throws -> SignInResult {
        let started = try await startRedirect(for: provider, redirectURI: redirectURI, intent: intent)
        let callbackURL: URL
        do {
            callbackURL = try await WebAuthenticationSessionRun(anchor: presentationAnchor)
                .callbackURL(opening: started.url, redirectURI: redirectURI,
                             prefersEphemeral: prefersEphemeralWebBrowserSession)
        } catch {
            // The sheet was closed or could not open: this flow will not come back.
            await forgetRedirect(state: started.state)
            throw error
        }
        return try await completeSignIn(from: callbackURL)
    }
}

/// One `ASWebAuthenticationSession`, from `start()` to its answer; kept alive (with its presentation context, which
/// the session holds weakly) for the whole wait.
@MainActor
private final class WebAuthenticationSessionRun {
    private let anchorProvider: PresentationAnchorProvider
    private var session: ASWebAuthenticationSession?

    init(anchor: ASPresentationAnchor) {
        anchorProvider = PresentationAnchorProvider(anchor)
    }

    /// The address the browser came back to.
    func callbackURL(opening url: URL, redirectURI: URL, prefersEphemeral: Bool) async throws -> URL {
        let answer = ResumeOnce()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<URL, any Error>) in
                answer.set(continuation)
                // Not main-actor isolated: the session may call back on any thread.
                let completion: @Sendable (URL?, (any Error)?) -> Void = { url, error in
                    if let url {
                        answer.resume(with: .success(url))
                    } else if let error = error as? ASWebAuthenticationSessionError, error.code == .canceledLogin {
                        answer.resume(with: .failure(LanyardError.signInCancelled))
                    } else {
                        answer.resume(with: .failure(error ?? LanyardError.signInCancelled))
                    }
                }
                guard let session = Self.session(url: url, redirectURI: redirectURI, completion: completion) else {
                    answer.resume(with: .failure(LanyardError.invalidRequest(
                        field: "redirect_uri",
                        message: "An https redirect URI needs iOS 17.4 or macOS 14.4; use the app's own scheme.")))
                    return
                }
                session.presentationContextProvider = anchorProvider
                session.prefersEphemeralWebBrowserSession = prefersEphemeral
                self.session = session
                if !session.start() {
                    answer.resume(with: .failure(LanyardError.invalidRequest(
                        field: nil, message: "The sign-in page could not be opened.")))
                }
            }
        } onCancel: {
            Task { @MainActor in self.cancel() }
        }
    }

    private func cancel() {
        session?.cancel()
    }

    /// A session that catches `redirectURI`: its scheme, or (an https address) its host and path.
    private static func session(url: URL, redirectURI: URL,
                                completion: @escaping @Sendable (URL?, (any Error)?) -> Void) -> ASWebAuthenticationSession? {
        guard redirectURI.scheme?.lowercased() == "https" else {
            return ASWebAuthenticationSession(url: url, callbackURLScheme: redirectURI.scheme, completionHandler: completion)
        }
        if #available(iOS 17.4, macOS 14.4, visionOS 1.1, *), let host = redirectURI.host {
            return ASWebAuthenticationSession(url: url, callback: .https(host: host, path: redirectURI.path),
                                              completionHandler: completion)
        }
        return nil
    }
}

/// The window the sheet is shown over.
private final class PresentationAnchorProvider: NSObject, ASWebAuthenticationPresentationContextProviding {
    private let anchor: ASPresentationAnchor

    init(_ anchor: ASPresentationAnchor) {
        self.anchor = anchor
    }

    func presentationAnchor(for session: ASWebAuthenticationSession) -> ASPresentationAnchor {
        anchor
    }
}

/// A continuation resumed once, whichever of the session's answer, a failed start or a cancel comes first.
private final class ResumeOnce: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<URL, any Error>?

    func set(_ continuation: CheckedContinuation<URL, any Error>) {
        lock.withLock { self.continuation = continuation }
    }

    func resume(with result: Result<URL, any Error>) {
        let waiting = lock.withLock {
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(with: result)
    }
}
#endif

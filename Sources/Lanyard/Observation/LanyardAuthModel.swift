#if canImport(Observation)
import Foundation
import Observation

/// The client's auth state for SwiftUI: observe `user` and `isSignedIn` in views, call the client for actions.
///
/// ```swift
/// @main struct NotesApp: App {
///     @State private var auth = LanyardAuthModel(client: LanyardClient(url: serverURL))
///     var body: some Scene {
///         WindowGroup {
///             if auth.isSignedIn { HomeView() } else { SignInView() }
///         }
///         .environment(auth)
///     }
/// }
/// ```
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@MainActor
@Observable
public final class LanyardAuthModel {
    /// The client the model follows.
    public let client: LanyardClient
    /// The signed-in user, or nil.
    public private(set) var user: User?
    /// Why the client last signed out, until the next sign-in.
    public private(set) var lastSignOutReason: SignOutReason?
    @ObservationIgnored private var listener: Task<Void, Never>?

    /// A signed-in person, guest or not.
    ///
    /// ```swift
    /// if auth.isSignedIn { HomeView() }
    /// ```
    public var isSignedIn: Bool { user != nil }

    /// The user's sign-in methods, oldest first.
    ///
    /// ```swift
    /// ForEach(auth.linkedProviders, id: \.provider) { Text($0.provider.displayName) }
    /// ```
    public var linkedProviders: [LinkedProvider] { user?.linkedProviders ?? [] }

    /// Follows `client`'s events from now on.
    ///
    /// ```swift
    /// let auth = LanyardAuthModel(client: client)
    /// ```
    public init(client: LanyardClient) {
        self.client = client
        user = client.user
        let events = client.authEvents
        listener = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                self.apply(event)
            }
        }
    }

    deinit {
        listener?.cancel()
    }

    private func apply(_ event: AuthEvent) {
        switch event {
        case .restored(let user):
            self.user = user
        case .signedIn(let user), .userUpdated(let user):
            self.user = user
            lastSignOutReason = nil
        case .signedOut(let reason):
            user = nil
            lastSignOutReason = reason
        case .tokenRefreshed, .linked, .unlinked, .merged:
            break
        }
    }
}
#endif

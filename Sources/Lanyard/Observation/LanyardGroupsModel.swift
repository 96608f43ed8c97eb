#if canImport(Observation)
import Foundation
import Observation

/// The signed-in account's groups for SwiftUI: observe `groups` in a family screen; the model's actions keep the
/// list current, sign-in loads it and sign-out empties it. `refresh()` reads it again (pull to refresh, or when
/// the app comes to the foreground).
///
/// ```swift
/// @State private var families = LanyardGroupsModel(client: client)
/// var body: some View {
///     List(families.groups) { group in Text(group.name) }
///         .task { await families.refresh() }
/// }
/// ```
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@MainActor
@Observable
public final class LanyardGroupsModel {
    /// The client the model follows.
    public let client: LanyardClient
    /// The account's groups, oldest membership first; empty when signed out.
    public private(set) var groups: [LanyardGroup] = []
    /// The last refresh's failure, until a refresh succeeds.
    public private(set) var lastError: LanyardError?
    @ObservationIgnored private var listener: Task<Void, Never>?

    /// Follows `client` from now on (and loads the groups when it is signed in).
    ///
    /// ```swift
    /// let families = LanyardGroupsModel(client: client)
    /// ```
    public init(client: LanyardClient) {
        self.client = client
        let events = client.authEvents
        listener = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                switch event {
                case .signedOut: self.groups = []
                case .signedIn, .restored(.some), .merged: await self.refresh()
                default: break
                }
            }
        }
    }

    deinit {
        listener?.cancel()
    }

    /// Reads the account's groups again.
    ///
    /// ```swift
    /// .refreshable { await families.refresh() }
    /// ```
    public func refresh() async {
        do {
            groups = try await client.groups.list()
            lastError = nil
        } catch let error as LanyardError {
            lastError = error
        } catch {
            lastError = .network(URLError(.unknown))
        }
    }

    /// Creates a family the account owns, and lists it.
    ///
    /// ```swift
    /// let family = try await families.create(name: "The Smiths")
    /// ```
    @discardableResult
    public func create(name: String, kind: LanyardGroup.Kind = .family) async throws -> LanyardGroup {
        let group = try await client.groups.create(name: name, kind: kind)
        await refresh()
        return group
    }

    /// Joins with a code (or an invite's URL), and lists the group.
    ///
    /// ```swift
    /// try await families.join(code: typedCode)
    /// ```
    @discardableResult
    public func join(code: String) async throws -> LanyardGroup {
        let group = try await client.groups.join(code: code)
        await refresh()
        return group
    }

    /// Leaves a group, and drops it from the list.
    ///
    /// ```swift
    /// try await families.leave(family.id)
    /// ```
    public func leave(_ groupID: LanyardGroup.ID) async throws {
        try await client.groups.leave(groupID)
        groups.removeAll { $0.id == groupID }
    }
}
#endif

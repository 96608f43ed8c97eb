#if canImport(SwiftUI)
import Lanyard
import SwiftUI

/// A family screen (docs/guides/family-sharing.md): the account's families, an invite to share as a link or a code, joining
/// with a typed code, each family's members (no relay addresses: the server never sends them) and leaving.
@available(iOS 17, macOS 14, *)
public struct FamilyScreen: View {
    @State private var families: LanyardGroupsModel
    @State private var newName = ""
    @State private var code = ""
    @State private var message: String?

    public init(client: LanyardClient) {
        _families = State(initialValue: LanyardGroupsModel(client: client))
    }

    public var body: some View {
        NavigationStack {
            List {
                Section("Your families") {
                    ForEach(families.groups) { group in
                        NavigationLink(value: group.id) {
                            VStack(alignment: .leading) {
                                Text(group.name)
                                Text("\(group.memberCount) members · \(group.role?.rawValue ?? "")")
                                    .font(.caption).foregroundStyle(.secondary)
                            }
                        }
                    }
                }
                Section("Start a family") {
                    TextField("Family name", text: $newName)
                    Button("Create") { run { try await families.create(name: newName); newName = "" } }
                        .disabled(newName.trimmingCharacters(in: .whitespaces).isEmpty)
                }
                Section("Join with a code") {
                    TextField("K7QMX-2XPDA", text: $code)
                        .textInputAutocapitalizationNever()
                    Button("Join") { run { try await families.join(code: code); code = "" } }
                        .disabled(code.isEmpty)
                }
                if let message { Section { Text(message).foregroundStyle(.red) } }
            }
            .navigationTitle("Family")
            .navigationDestination(for: LanyardGroup.ID.self) { id in
                FamilyDetail(groupID: id, families: families)
            }
            .refreshable { await families.refresh() }
            .task { await families.refresh() }
        }
    }

    private func run(_ action: @escaping @MainActor () async throws -> Void) {
        perform(action) { message = $0 }
    }
}

/// One family: its members, an invite to share, and Leave.
@available(iOS 17, macOS 14, *)
struct FamilyDetail: View {
    let groupID: LanyardGroup.ID
    let families: LanyardGroupsModel
    @State private var group: LanyardGroup?
    @State private var invite: GroupInvite?
    @State private var message: String?
    @Environment(\.dismiss) private var dismiss

    var body: some View {
        List {
            Section("Members") {
                ForEach(group?.members ?? []) { member in
                    HStack {
                        VStack(alignment: .leading) {
                            Text(member.displayName ?? "Member")
                            if let email = member.email { Text(email).font(.caption).foregroundStyle(.secondary) }
                        }
                        Spacer()
                        Text(member.role.rawValue.capitalized).font(.caption).foregroundStyle(.secondary)
                    }
                }
            }
            if (group?.role ?? .viewer) >= .admin || group?.membersCanInvite == true {
                Section("Invite") {
                    if let invite, let url = invite.url, let code = invite.code {
                        ShareLink("Share the invite", item: url)
                        Text("Or tell them the code: \(code)").font(.body.monospaced()).textSelection(.enabled)
                    } else {
                        Button("Make an invite") {
                            run { invite = try await families.client.groups.invite(to: groupID) }
                        }
                    }
                }
            }
            Section {
                Button("Leave this family", role: .destructive) {
                    run {
                        try await families.leave(groupID)
                        dismiss()
                    }
                }
            }
            if let message { Section { Text(message).foregroundStyle(.red) } }
        }
        .navigationTitle(group?.name ?? "Family")
        .task { run { group = try await families.client.groups.group(groupID) } }
    }

    private func run(_ action: @escaping @MainActor () async throws -> Void) {
        perform(action) { message = $0 }
    }
}

/// Runs `action`, then hands `report` the message to show: nil when it worked.
@MainActor
private func perform(_ action: @escaping @MainActor () async throws -> Void,
                     report: @escaping @MainActor (String?) -> Void) {
    Task { @MainActor in
        do {
            try await action()
            report(nil)
        } catch let error as LanyardError {
            report(error.errorDescription)
        } catch {
            report(error.localizedDescription)
        }
    }
}

private extension View {
    /// Codes are typed as they come: no capitals forced, no autocorrection (iOS only).
    func textInputAutocapitalizationNever() -> some View {
        #if os(iOS)
        self.textInputAutocapitalization(.never).autocorrectionDisabled()
        #else
        self
        #endif
    }
}
#endif

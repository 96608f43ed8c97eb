import Foundation
import Testing

/// Every relative link in the README, ARCHITECTURE, CONTRIBUTING, the CHANGELOG and `docs/` points at a file that
/// exists, and every `#anchor` at a heading of that file (as GitHub makes anchors of headings).
@Suite struct DocumentLinkTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static var documents: [URL] {
        var found = ["README.md", "ARCHITECTURE.md", "CONTRIBUTING.md", "CHANGELOG.md", "BENCHMARKS.md"]
            .map { root.appendingPathComponent($0) }
        let docs = root.appendingPathComponent("docs")
        if let walker = FileManager.default.enumerator(at: docs, includingPropertiesForKeys: nil) {
            for case let url as URL in walker where url.pathExtension == "md" { found.append(url) }
        }
        return found
    }

    /// The anchors GitHub gives a document's headings: lower case, punctuation dropped, spaces as dashes.
    static func anchors(of text: String) -> Set<String> {
        var anchors = Set<String>()
        var inCode = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inCode.toggle() }
            guard !inCode, line.hasPrefix("#") else { continue }
            let title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces).lowercased()
            let kept = title.unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) || $0 == " " || $0 == "-" || $0 == "_" }
            anchors.insert(String(String.UnicodeScalarView(kept)).replacingOccurrences(of: " ", with: "-"))
        }
        return anchors
    }

    /// `[text](target)` links outside code blocks, without web addresses.
    static func relativeLinks(in text: String) -> [String] {
        var links: [String] = []
        var inCode = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inCode.toggle() }
            guard !inCode else { continue }
            var rest = Substring(line)
            while let open = rest.range(of: "](") {
                let after = rest[open.upperBound...]
                guard let close = after.firstIndex(of: ")") else { break }
                let target = String(after[..<close])
                if !target.contains("://"), !target.hasPrefix("mailto:"), !target.contains(" ") { links.append(target) }
                rest = after[close...]
            }
        }
        return links
    }

    @Test func everyRelativeLinkInTheDocumentsResolves() throws {
        var broken: [String] = []
        var checked = 0
        for document in Self.documents {
            let text = try String(contentsOf: document, encoding: .utf8)
            for link in Self.relativeLinks(in: text) {
                checked += 1
                let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let target = parts[0].isEmpty ? document
                    : document.deletingLastPathComponent().appendingPathComponent(parts[0]).standardizedFileURL
                let name = "\(document.lastPathComponent): \(link)"
                guard FileManager.default.fileExists(atPath: target.path) else {
                    broken.append(name)
                    continue
                }
                if parts.count == 2, target.pathExtension == "md" {
                    let anchors = Self.anchors(of: try String(contentsOf: target, encoding: .utf8))
                    if !anchors.contains(parts[1]) { broken.append(name + " (no such heading)") }
                }
            }
        }
        #expect(broken.isEmpty, "\(broken)")
        #expect(checked > 20, "the documents link to each other")
    }

    @Test func theReadmeIsAFrontDoorNotTheReference() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.split(separator: "\n", omittingEmptySubsequences: false).count <= 300)
        // Every configuration variable is in the reference's one table, and the README lists none of them there.
        let reference = try String(contentsOf: Self.root.appendingPathComponent("docs/reference.md"), encoding: .utf8)
        // Every file of the configuration's folder: the loader and the settings it reads with (email, passkeys,
        // OpenID Connect providers, switching day).
        let folder = Self.root.appendingPathComponent("Sources/LanyardSupport/Configuration")
        let configuration = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
            .map { try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8) }.joined(separator: "\n")
        // A prefix (`"LANYARD_OIDC_"`) is not a variable: a name ends in a letter or digit.
        let read = Set(configuration.matches(of: /"(LANYARD_[A-Z0-9_]*[A-Z0-9])"/).map { String($0.1) })
        let tableRows = reference.split(separator: "\n").filter { $0.hasPrefix("| `LANYARD_") }.joined(separator: "\n")
        #expect(!read.isEmpty)
        for variable in read.sorted() {
            #expect(tableRows.contains("`\(variable)`"), "\(variable) is missing from docs/reference.md section 2")
        }
        #expect(!readme.contains("| `LANYARD_"), "the README has no configuration table")
    }
}

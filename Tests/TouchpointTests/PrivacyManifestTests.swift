import Foundation
import Testing

/// `Sources/Touchpoint/PrivacyInfo.xcprivacy`, the privacy manifest an app that ships the SDK
/// needs: its shape, Apple's reason codes, and that it declares exactly the required-reason API
/// categories the SDK's code uses (a new use of `UserDefaults` or `stat` without a declaration
/// fails here).
struct PrivacyManifestTests {
    /// A required-reason API category: how its APIs look in Swift source, and the reasons Apple
    /// defines for it.
    struct Category: Sendable {
        var name: String
        var patterns: [String]
        var reasons: Set<String>
    }

    /// Apple's required-reason API categories, the APIs of each as they appear in Swift, and their
    /// reason codes.
    static let categories: [Category] = [
        Category(
            name: "NSPrivacyAccessedAPICategoryFileTimestamp",
            patterns: [
                #"\bstat\("#, #"\bfstat\("#, #"\bfstatat\("#, #"\blstat\("#, #"\bf?getattrlist(bulk|at)?\("#,
                #"\.(creationDate|modificationDate|fileModificationDate|contentModificationDate)\b"#,
                #"\.(creationDateKey|contentModificationDateKey)\b"#, #"\battributesOfItem\("#,
            ],
            reasons: ["DDA9.1", "C617.1", "3B52.1", "0A2A.1"]),
        Category(
            name: "NSPrivacyAccessedAPICategorySystemBootTime",
            patterns: [#"\bsystemUptime\b"#, #"\bmach_absolute_time\("#],
            reasons: ["35F9.1", "8FFB.1", "3D61.1"]),
        Category(
            name: "NSPrivacyAccessedAPICategoryDiskSpace",
            patterns: [
                #"\bvolume(Available|Total)Capacity\w*"#, #"\bsystem(Free)?Size\b"#, #"\bf?statv?fs\("#,
            ],
            reasons: ["85F4.1", "E174.1", "7D9E.1", "B728.1"]),
        Category(
            name: "NSPrivacyAccessedAPICategoryActiveKeyboards", patterns: [#"\bactiveInputModes\b"#],
            reasons: ["3EC4.1", "54BD.1"]),
        Category(
            name: "NSPrivacyAccessedAPICategoryUserDefaults", patterns: [#"\bUserDefaults\b"#],
            reasons: ["CA92.1", "1C8F.1", "C56D.1", "AC6B.1"]),
    ]

    static let dataTypePurposes: Set<String> = [
        "NSPrivacyCollectedDataTypePurposeThirdPartyAdvertising",
        "NSPrivacyCollectedDataTypePurposeDeveloperAdvertising",
        "NSPrivacyCollectedDataTypePurposeAnalytics", "NSPrivacyCollectedDataTypePurposeProductPersonalization",
        "NSPrivacyCollectedDataTypePurposeAppFunctionality", "NSPrivacyCollectedDataTypePurposeOther",
    ]

    /// What the SDK collects and sends to the collector: the user id, the install (anonymous) id,
    /// the events, and survey text answers.
    static let collected: Set<String> = [
        "NSPrivacyCollectedDataTypeUserID", "NSPrivacyCollectedDataTypeDeviceID",
        "NSPrivacyCollectedDataTypeProductInteraction", "NSPrivacyCollectedDataTypeOtherUserContent",
    ]

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func manifest() throws -> [String: Any] {
        let data = try Data(contentsOf: root.appendingPathComponent("Sources/Touchpoint/PrivacyInfo.xcprivacy"))
        let plist = try PropertyListSerialization.propertyList(from: data, format: nil)
        return try #require(plist as? [String: Any], "the manifest is a dictionary")
    }

    /// Each category's patterns, compiled once. `\b` is the simple word boundary: Unicode's
    /// default one sees no boundary inside `defaults.UserDefaults.standard`-like member chains.
    nonisolated(unsafe) static let compiled: [(name: String, patterns: [Regex<AnyRegexOutput>])] = categories.map {
        category in (category.name, category.patterns.map { try! Regex($0).wordBoundaryKind(.simple) })
    }
    /// A `//` comment: at the start of a line or after white space (not the `//` of a URL).
    nonisolated(unsafe) static let comment = try! Regex(#"(^|\s)//.*$"#)

    /// The categories whose APIs `source` uses, outside comments.
    static func categories(usedIn source: String) throws -> Set<String> {
        var used: Set<String> = []
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let code = line.replacing(comment, with: "")
            for category in compiled where !used.contains(category.name) {
                if category.patterns.contains(where: { code.contains($0) }) { used.insert(category.name) }
            }
        }
        return used
    }

    /// Every category the SDK's sources use, with one place each is used (for the failure message).
    static func categoriesUsedBySDK() throws -> [String: String] {
        var used: [String: String] = [:]
        let sources = root.appendingPathComponent("Sources")
        let enumerator = try #require(FileManager.default.enumerator(atPath: sources.path))
        for case let path as String in enumerator where path.hasSuffix(".swift") {
            // The test support library ships in no app.
            if path.hasPrefix("TouchpointTesting/") { continue }
            let text = try String(contentsOf: sources.appendingPathComponent(path), encoding: .utf8)
            for category in try categories(usedIn: text) where used[category] == nil {
                used[category] = "Sources/" + path
            }
        }
        return used
    }

    @Test func theManifestHasTheShapeApplesToolsRead() throws {
        let manifest = try Self.manifest()
        #expect(manifest["NSPrivacyTracking"] as? Bool == false)
        #expect((manifest["NSPrivacyTrackingDomains"] as? [String])?.isEmpty == true)
        let types = try #require(manifest["NSPrivacyCollectedDataTypes"] as? [[String: Any]])
        #expect(Set(types.compactMap { $0["NSPrivacyCollectedDataType"] as? String }) == Self.collected)
        for type in types {
            let name = type["NSPrivacyCollectedDataType"] as? String ?? "?"
            #expect(type["NSPrivacyCollectedDataTypeLinked"] as? Bool == true, "\(name) is linked to the user")
            #expect(type["NSPrivacyCollectedDataTypeTracking"] as? Bool == false, "\(name) is not for tracking")
            let purposes = try #require(type["NSPrivacyCollectedDataTypePurposes"] as? [String], "\(name)")
            #expect(!purposes.isEmpty && Set(purposes).isSubset(of: Self.dataTypePurposes), "\(name): \(purposes)")
        }
        let apis = try #require(manifest["NSPrivacyAccessedAPITypes"] as? [[String: Any]])
        for api in apis {
            let name = try #require(api["NSPrivacyAccessedAPIType"] as? String)
            let category = try #require(Self.categories.first { $0.name == name }, "\(name) is not a category")
            let reasons = try #require(api["NSPrivacyAccessedAPITypeReasons"] as? [String], "\(name)")
            #expect(!reasons.isEmpty && Set(reasons).isSubset(of: category.reasons), "\(name): \(reasons)")
        }
    }

    @Test func theManifestDeclaresExactlyTheCategoriesTheSDKUses() throws {
        let apis = try #require(try Self.manifest()["NSPrivacyAccessedAPITypes"] as? [[String: Any]])
        let declared = Set(apis.compactMap { $0["NSPrivacyAccessedAPIType"] as? String })
        let used = try Self.categoriesUsedBySDK()
        for (category, file) in used where !declared.contains(category) {
            Issue.record("\(file) uses \(category), which PrivacyInfo.xcprivacy does not declare")
        }
        for category in declared where used[category] == nil {
            Issue.record("PrivacyInfo.xcprivacy declares \(category), which no SDK source uses any more")
        }
        #expect(!used.isEmpty)
    }

    @Test func theManifestShipsAsAResourceOfTheUmbrella() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(manifest.contains(#"resources: [.copy("PrivacyInfo.xcprivacy")]"#))
    }

    @Test(
        arguments: [
            ("let defaults = UserDefaults(suiteName: suite)", ["NSPrivacyAccessedAPICategoryUserDefaults"]),
            ("guard fstat(descriptor, &info) == 0 else { return }", ["NSPrivacyAccessedAPICategoryFileTimestamp"]),
            ("let date = values.contentModificationDate", ["NSPrivacyAccessedAPICategoryFileTimestamp"]),
            ("let up = ProcessInfo.processInfo.systemUptime", ["NSPrivacyAccessedAPICategorySystemBootTime"]),
            (
                "let free = try url.resourceValues(forKeys: [.volumeAvailableCapacityKey])",
                ["NSPrivacyAccessedAPICategoryDiskSpace"]
            ),
            ("// UserDefaults is mentioned in a comment only", []),
            ("let status = restart(x) // fstat( in a comment", []),
            (
                "let url = \"https://example.com\"; let d = UserDefaults.standard",
                ["NSPrivacyAccessedAPICategoryUserDefaults"]
            ),
            ("let statistics = stats(of: file)", []),
            (
                "let fine = Foundation.UserDefaults.standard.bool(forKey: k)",
                ["NSPrivacyAccessedAPICategoryUserDefaults"]
            ),
        ] as [(String, [String])])
    func theScannerFindsEachCategorysAPIs(source: String, expected: [String]) throws {
        let found = try Self.categories(usedIn: source)
        #expect(found == Set(expected), "\(found.sorted())")
    }
}

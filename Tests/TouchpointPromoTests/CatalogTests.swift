import Foundation
import Testing
import TouchpointCore
import TouchpointPromo
import TouchpointTesting

/// Reading catalogs: the seed's schema, lenient skipping, and every problem with its JSON path.
struct CatalogTests {
    @Test func theSeedsQuickStartCatalogReadsWithoutProblems() throws {
        let catalog = try PromoCatalog(bytes: Array(PromoCatalogs.seedQuickStart.utf8))
        #expect(catalog.problems.isEmpty)
        #expect(catalog.apps.map(\.id) == ["myapp1", "myapp2"])
        let second = try #require(catalog.app(withID: "myapp2"))
        #expect(second.name == "My App 2")
        #expect(second.appStoreID == "987654321")
        #expect(second.iconURL == URL(string: "https://example.com/icon2.png"))
        #expect(second.category == "Finance")
        #expect(second.tagline == ["en": "Manage your finances", "ko": "재정을 관리하세요"])
        #expect(second.weight == nil)
        #expect(catalog.promoRules.isEmpty)
        #expect(catalog.maxApps == nil)
    }

    @Test func theSeedsRulesExampleReportsTheAppItDoesNotList() throws {
        var json = try JSONParser.parse(PromoCatalogs.seedQuickStart)
        guard case .object(var root) = json else { throw JSONProblem(path: .root, message: "fixture") }
        root["promoRules"] = ["myapp1": ["myapp2", "myapp3"], "myapp2": ["myapp1"]]
        json = .object(root)
        let catalog = try PromoCatalog(json: json)
        #expect(catalog.promoRules == ["myapp1": ["myapp2", "myapp3"], "myapp2": ["myapp1"]])
        #expect(catalog.problems.map(\.description) == [#"promoRules.myapp1[1]: unknown app id "myapp3""#])
        #expect(catalog.apps.count == 2)
    }

    @Test(arguments: [
        "http://example.com/icon.png",
        "HTTP://example.com/icon.png",
        "ftp://example.com/icon.png",
        "//example.com/icon.png",
        "icon.png",
        "https://",
        "https:icon.png",
        "",
        "data:image/png;base64,AAAA",
    ])
    func anIconThatIsNotHTTPSSkipsTheAppAndNamesThePath(icon: String) throws {
        let json = PromoCatalogs.document([
            PromoCatalogs.app("a"), PromoCatalogs.app("b", icon: icon), PromoCatalogs.app("c"),
        ])
        let catalog = try PromoCatalog(json: json)
        #expect(catalog.apps.map(\.id) == ["a", "c"])
        #expect(catalog.problems.map(\.description) == ["apps[1].iconURL: must be an https URL"])
    }

    @Test func httpsIconsInAnyCaseAreAccepted() throws {
        let json = PromoCatalogs.document([PromoCatalogs.app("a", icon: "HTTPS://Example.com/a.png?size=2x")])
        let catalog = try PromoCatalog(json: json)
        #expect(catalog.problems.isEmpty)
        #expect(catalog.apps.first?.iconURL.host == "Example.com")
    }

    /// Each broken field: the problem the validator reports for it.
    @Test(arguments: [
        ("id", JSONValue.int(7), "apps[1].id: expected a string, got number"),
        ("id", JSONValue.string("  "), "apps[1].id: must not be empty"),
        ("name", JSONValue.null, "apps[1].name: expected a string, got null"),
        ("name", JSONValue.string(""), "apps[1].name: must not be empty"),
        ("appStoreID", JSONValue.int(987_654_321), "apps[1].appStoreID: expected a string, got number"),
        (
            "appStoreID", JSONValue.string("id987"),
            #"apps[1].appStoreID: must be the App Store's numeric id (digits only), got "id987""#
        ),
        (
            "appStoreID", JSONValue.string(""),
            #"apps[1].appStoreID: must be the App Store's numeric id (digits only), got """#
        ),
        ("iconURL", JSONValue.array([]), "apps[1].iconURL: expected a string, got array"),
        ("category", JSONValue.bool(true), "apps[1].category: expected a string, got boolean"),
        ("tagline", JSONValue.string("Hello"), "apps[1].tagline: expected an object of texts by language, got string"),
        ("tagline", JSONValue.object([:]), "apps[1].tagline: must have at least one language"),
        ("tagline", JSONValue.object(["en": .int(1)]), "apps[1].tagline.en: expected a string, got number"),
        ("tagline", JSONValue.object(["pt-BR": ""]), #"apps[1].tagline["pt-BR"]: must not be empty"#),
        (
            "tagline", JSONValue.object(["en": "Hi", "english!": "Hi"]),
            #"apps[1].tagline["english!"]: not a language tag (e.g. "en", "pt-BR")"#
        ),
        ("weight", JSONValue.int(-1), "apps[1].weight: must be a number ≥ 0, got -1"),
        ("weight", JSONValue.string("2"), #"apps[1].weight: must be a number ≥ 0, got "2""#),
    ])
    func aBrokenFieldSkipsOnlyItsApp(field: String, value: JSONValue, expected: String) throws {
        guard case .object(var broken) = PromoCatalogs.app("b") else { return }
        broken[field] = value
        let json = PromoCatalogs.document([PromoCatalogs.app("a"), .object(broken), PromoCatalogs.app("c")])
        let catalog = try PromoCatalog(json: json)
        #expect(catalog.problems.map(\.description) == [expected])
        #expect(catalog.apps.map(\.id) == ["a", "c"])
        #expect(PromoCatalogValidator.problems(in: json) == catalog.problems)
    }

    @Test(arguments: ["id", "name", "appStoreID", "iconURL", "category", "tagline"])
    func aMissingRequiredFieldIsReported(field: String) throws {
        guard case .object(var broken) = PromoCatalogs.app("b") else { return }
        broken[field] = nil
        let catalog = try PromoCatalog(json: PromoCatalogs.document([PromoCatalogs.app("a"), .object(broken)]))
        #expect(catalog.problems.map(\.description) == ["apps[1].\(field): required"])
        #expect(catalog.apps.map(\.id) == ["a"])
    }

    @Test func everyProblemOfAnEntryIsReportedNotJustTheFirst() throws {
        let broken: JSONValue = [
            "id": "x", "name": "", "appStoreID": "12a", "iconURL": "http://x/y.png", "tagline": [:],
        ]
        let problems = PromoCatalogValidator.problems(in: PromoCatalogs.document([broken]))
        #expect(
            problems.map(\.description) == [
                "apps[0].name: must not be empty",
                #"apps[0].appStoreID: must be the App Store's numeric id (digits only), got "12a""#,
                "apps[0].iconURL: must be an https URL",
                "apps[0].category: required",
                "apps[0].tagline: must have at least one language",
            ])
    }

    @Test func entriesThatAreNotObjectsAreSkipped() throws {
        let json = PromoCatalogs.document([.string("a"), PromoCatalogs.app("b"), .null, .array([])])
        let catalog = try PromoCatalog(json: json)
        #expect(catalog.apps.map(\.id) == ["b"])
        #expect(
            catalog.problems.map(\.description) == [
                "apps[0]: expected an object, got string",
                "apps[2]: expected an object, got null",
                "apps[3]: expected an object, got array",
            ])
    }

    @Test func aDuplicateIdKeepsTheFirstEntry() throws {
        let json = PromoCatalogs.document([
            PromoCatalogs.app("a", name: "First"), PromoCatalogs.app("b"), PromoCatalogs.app("a", name: "Second"),
        ])
        let catalog = try PromoCatalog(json: json)
        #expect(catalog.apps.map(\.name) == ["First", "App b"])
        #expect(catalog.problems.map(\.description) == [#"apps[2].id: duplicate id "a", first at apps[0]"#])
    }

    @Test(arguments: [
        (JSONValue.array([]), "$: expected an object with an \"apps\" array, got array"),
        (JSONValue.string("apps"), "$: expected an object with an \"apps\" array, got string"),
        (JSONValue.object([:]), "apps: required"),
        (JSONValue.object(["apps": ["a": 1]]), "apps: expected an array, got object"),
    ])
    func anUnusableDocumentIsOneProblemAndThrows(json: JSONValue, expected: String) {
        #expect(PromoCatalogValidator.problems(in: json).map(\.description) == [expected])
        #expect(throws: JSONProblem.self) { try PromoCatalog(json: json) }
    }

    @Test func bytesThatAreNotJSONThrowAtTheRoot() {
        #expect { try PromoCatalog(bytes: Array("<html>".utf8)) } throws: { error in
            guard let problem = error as? JSONProblem else { return false }
            return problem.path == .root && problem.message.contains("invalid JSON at byte 0")
        }
    }

    @Test func rulesAreReadAndTheirUnknownIdsReported() throws {
        let json = PromoCatalogs.document(
            PromoCatalogs.apps("a", "b", "c"),
            rules: ["a": ["b", "zz", 3], "ghost": ["a"], "c": "b"]
        )
        let catalog = try PromoCatalog(json: json)
        #expect(catalog.promoRules == ["a": ["b", "zz"], "ghost": ["a"], "c": []])
        #expect(
            catalog.problems.map(\.description) == [
                #"promoRules.a[1]: unknown app id "zz""#,
                "promoRules.a[2]: expected an app id (a string), got number",
                "promoRules.c: expected an array of app ids, got string",
                #"promoRules.ghost: unknown app id "ghost""#,
            ])
        #expect(catalog.apps.count == 3)
    }

    @Test func aRuleMayNameAnAppWhoseEntryWasSkipped() throws {
        let json = PromoCatalogs.document(
            [PromoCatalogs.app("a"), PromoCatalogs.app("b", icon: "http://insecure/b.png")], rules: ["a": ["b"]])
        let catalog = try PromoCatalog(json: json)
        #expect(catalog.problems.map(\.description) == ["apps[1].iconURL: must be an https URL"])
    }

    @Test func rulesThatAreNotAnObjectAreReportedAndIgnored() throws {
        let catalog = try PromoCatalog(json: PromoCatalogs.document(PromoCatalogs.apps("a", "b"), rules: ["a", "b"]))
        #expect(catalog.promoRules.isEmpty)
        #expect(
            catalog.problems.map(\.description) == [
                "promoRules: expected an object of app id → list of app ids, got array"
            ])
    }

    @Test(
        arguments: [
            (JSONValue.int(3), 3, nil),
            (JSONValue.int(0), 0, nil),
            (JSONValue.double(2.0), 2, nil),
            (JSONValue.null, nil, nil),
            (JSONValue.int(-1), nil, "maxApps: must be an integer ≥ 0, got -1"),
            (JSONValue.double(2.5), nil, "maxApps: must be an integer ≥ 0, got 2.5"),
            (JSONValue.string("3"), nil, #"maxApps: must be an integer ≥ 0, got "3""#),
        ] as [(JSONValue, Int?, String?)])
    func maxAppsIsReadOrReported(value: JSONValue, expected: Int?, problem: String?) throws {
        let catalog = try PromoCatalog(json: PromoCatalogs.document(PromoCatalogs.apps("a"), maxApps: value))
        #expect(catalog.maxApps == expected)
        #expect(catalog.problems.map(\.description) == (problem.map { [$0] } ?? []))
    }

    @Test func weightsAreReadAsNumbers() throws {
        let json = PromoCatalogs.document([
            PromoCatalogs.app("a", weight: 2), PromoCatalogs.app("b", weight: 0.5), PromoCatalogs.app("c", weight: 0),
            PromoCatalogs.app("d"),
        ])
        let catalog = try PromoCatalog(json: json)
        #expect(catalog.apps.map(\.weight) == [2, 0.5, 0, nil])
        #expect(catalog.problems.isEmpty)
    }

    @Test func unknownFieldsAreIgnoredForForwardCompatibility() throws {
        guard case .object(var app) = PromoCatalogs.app("a") else { return }
        app["badge"] = "new"
        let json: JSONValue = ["apps": [.object(app)], "version": 3, "theme": ["accent": "#f00"]]
        let catalog = try PromoCatalog(json: json)
        #expect(catalog.problems.isEmpty)
        #expect(catalog.apps.map(\.id) == ["a"])
    }

    @Test func theValidatorIsAPlainFunctionOverJSONValues() {
        let validate: (JSONValue) -> [JSONProblem] = PromoCatalogValidator.problems(in:)
        #expect(validate(PromoCatalogs.document(PromoCatalogs.apps("a", "b"))).isEmpty)
        let bad = PromoCatalogs.document([
            PromoCatalogs.app("a"), PromoCatalogs.app("b"), PromoCatalogs.app("c", icon: "http://c"),
        ])
        #expect(
            validate(bad) == [
                JSONProblem(
                    path: JSONPath(components: [.key("apps"), .index(2), .key("iconURL")]),
                    message: "must be an https URL")
            ])
        #expect(validate(bad).first?.description == "apps[2].iconURL: must be an https URL")
    }

    /// Random mutations of a valid catalog: reading never crashes, the validator and the lenient
    /// reader agree, and every app that survives is valid on its own.
    @Test func randomlyDamagedCatalogsNeverCrashAndAgreeWithTheValidator() throws {
        var random = SeededRandomNumberGenerator(seed: 42)
        let base = PromoCatalogs.document(PromoCatalogs.apps("a", "b", "c", "d"), rules: ["a": ["b", "c"]], maxApps: 2)
        let junk: [JSONValue] = [
            .null, .int(-3), .double(1.5), .string(""), .string("http://x"), .array([]), .object([:]), .bool(false),
        ]
        for _ in 0..<500 {
            var json = base
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                json = Self.mutate(json, with: junk.randomElement(using: &random)!, random: &random)
            }
            let problems = PromoCatalogValidator.problems(in: json)
            if let catalog = try? PromoCatalog(json: json) {
                #expect(catalog.problems == problems)
                for app in catalog.apps {
                    #expect(app.iconURL.scheme?.lowercased() == "https")
                    #expect(!app.appStoreID.isEmpty && app.appStoreID.allSatisfy(\.isNumber))
                    #expect(!app.tagline.isEmpty)
                }
                #expect(Set(catalog.apps.map(\.id)).count == catalog.apps.count)
            } else {
                #expect(problems.count == 1)
            }
        }
    }

    /// Replaces one randomly chosen value (at any depth) with `replacement`.
    static func mutate(_ value: JSONValue, with replacement: JSONValue, random: inout SeededRandomNumberGenerator)
        -> JSONValue
    {
        switch value {
        case .object(var members) where !members.isEmpty && Int.random(in: 0..<4, using: &random) > 0:
            let key = members.keys.sorted().randomElement(using: &random)!
            members[key] = mutate(members[key]!, with: replacement, random: &random)
            return .object(members)
        case .array(var elements) where !elements.isEmpty && Int.random(in: 0..<4, using: &random) > 0:
            let index = Int.random(in: elements.indices, using: &random)
            elements[index] = mutate(elements[index], with: replacement, random: &random)
            return .array(elements)
        default:
            return replacement
        }
    }
}

import Foundation
import Testing
import TouchpointPromo
import TouchpointTesting

/// Taglines: the user's locale, then its language, then English, then any (the smallest key).
struct LocalizationTests {
    static let texts: [String: String] = [
        "en": "English",
        "en-GB": "British",
        "ko": "Korean",
        "pt": "Portuguese",
        "pt-BR": "Brazilian",
        "zh-Hant": "Traditional",
        "zh-Hans": "Simplified",
        "es-419": "Latin American",
        "fr-CA": "Canadian French",
    ]

    @Test(arguments: [
        ("pt-BR", "Brazilian"),
        ("pt_BR", "Brazilian"),
        ("PT-br", "Brazilian"),
        ("pt-BR.UTF-8", "Brazilian"),
        ("pt_BR.UTF-8", "Brazilian"),
        ("pt-PT", "Portuguese"),
        ("pt", "Portuguese"),
        ("ko", "Korean"),
        ("ko-KR", "Korean"),
        ("ko_KR@calendar=gregorian", "Korean"),
        ("en", "English"),
        ("en-US", "English"),
        ("en-GB", "British"),
        ("en_GB", "British"),
        ("zh-Hant-TW", "Traditional"),
        ("zh-Hant", "Traditional"),
        ("zh-Hans-CN", "Simplified"),
        ("zh-TW", "Simplified"),  // no zh-TW or zh: the smallest zh-… key
        ("es-MX", "Latin American"),  // no es-MX or es: another region of Spanish
        ("es-419", "Latin American"),
        ("fr-FR", "Canadian French"),
        ("fr", "Canadian French"),
        ("de-DE", "English"),
        ("ja", "English"),
        ("", "English"),
        ("C", "English"),
        ("POSIX", "English"),
        ("-", "English"),
        ("de_DE@euro", "English"),
    ])
    func theBestTextForALocale(locale: String, expected: String) {
        #expect(TaglineLocalizer.text(in: Self.texts, for: locale) == expected)
    }

    @Test(arguments: [
        ("de", ["fr": "F", "en-US": "US", "en-AU": "AU"], "AU"),  // no plain en: the smallest en-… key
        ("de", ["ja": "J", "fr": "F", "ko": "K"], "F"),  // no English: the smallest key
        ("de", ["zh": "Z", "EN": "E"], "E"),  // keys compared without case
        ("de", ["ko": "K", "ar": "A"], "A"),
        ("pt", ["pt-BR": "BR", "pt-AO": "AO"], "AO"),  // smallest of the language's regions
        ("ko", ["en": "E"], "E"),
    ])
    func fallbacksAreDeterministic(locale: String, texts: [String: String], expected: String) {
        #expect(TaglineLocalizer.text(in: texts, for: locale) == expected)
        // Whatever order the keys come in.
        let shuffledKeys = texts.keys.sorted().reversed()
        #expect(TaglineLocalizer.bestKey(for: locale, among: Array(shuffledKeys)).flatMap { texts[$0] } == expected)
    }

    @Test func equalTagsWrittenDifferentlyPickTheSmallestSpelling() {
        #expect(TaglineLocalizer.bestKey(for: "pt-br", among: ["pt_BR", "pt-BR"]) == "pt-BR")
    }

    @Test func noTextsGiveNothing() {
        #expect(TaglineLocalizer.text(in: [:], for: "en") == nil)
        let app = PromoApp(
            id: "a", name: "A", appStoreID: "1", iconURL: URL(string: "https://a/b")!, category: "c", tagline: [:])
        #expect(app.tagline(for: "en") == "")
    }

    @Test func theSeedsCatalogInKoreanAndEnglish() throws {
        let catalog = try PromoCatalog(bytes: Array(PromoCatalogs.seedQuickStart.utf8))
        let app = try #require(catalog.app(withID: "myapp2"))
        #expect(app.tagline(for: "ko") == "재정을 관리하세요")
        #expect(app.tagline(for: "ko-KR") == "재정을 관리하세요")
        #expect(app.tagline(for: "en-US") == "Manage your finances")
        #expect(app.tagline(for: "ja-JP") == "Manage your finances")
    }
}

import ArgumentParser
import Foundation
import Testing

@testable import TouchpointCommands

/// `touchpoint serve --cors-origins` and `--public-url`: what they accept, and what they refuse by name.
struct ServeOptionsTests {
    @Test func corsOriginsAreAListOfOrigins() throws {
        #expect(
            try ServeCommand.origins(" https://shop.example.com, http://127.0.0.1:3000 ,")
                == ["https://shop.example.com", "http://127.0.0.1:3000"])
    }

    @Test(arguments: [
        ("", "--cors-origins: no origin given"),
        ("shop.example.com", "--cors-origins: shop.example.com is not an origin"),
        ("https://shop.example.com/path", "--cors-origins: https://shop.example.com/path is not an origin"),
        ("ftp://shop.example.com", "--cors-origins: ftp://shop.example.com is not an origin"),
        ("https://a.example, *", "--cors-origins: * is not an origin"),
    ])
    func badCORSOriginsAreNamed(text: String, message: String) {
        do {
            let origins = try ServeCommand.origins(text)
            Issue.record("accepted \(origins)")
        } catch let error as ValidationError {
            #expect(error.message.hasPrefix(message), "\(error.message)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func thePublicURLNeedsAnHTTPSchemeAndAHost() throws {
        #expect(try ServeCommand.publicURL("https://collector.example.com").host == "collector.example.com")
        for bad in ["collector.example.com", "file:///x", "https://"] {
            #expect(throws: ValidationError.self) { try ServeCommand.publicURL(bad) }
        }
    }
}

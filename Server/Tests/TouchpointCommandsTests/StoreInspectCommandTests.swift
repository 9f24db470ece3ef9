import ArgumentParser
import Foundation
import Testing
import TouchpointStore
import TouchpointTesting

@testable import TouchpointCommands

struct StoreInspectCommandTests {
    @Test func printsValuesByKeyPath() throws {
        let directory = try TemporaryDirectory()
        let url = directory.appending("store.json")
        let store = DefaultStore(appID: "com.acme.app", version: SemanticVersion(3, 1, 0))
        let file = store.scoped(.file(url: url))
        file.set("cart", ["total": 12.5, "items": [["title": "Socks", "qty": 2]]])
        file.set(#"labels["pt-BR"]"#, "Olá")
        file.set("theme.accent", .color("#FF8800"))
        file.flush()

        let text = try StoreInspectCommand.render(file: url.path, json: false)
        #expect(
            text == """
                \(url.path): app com.acme.app, data version 3.1.0, 5 values
                cart.items[0].qty = 2
                cart.items[0].title = "Socks"
                cart.total = 12.5
                labels["pt-BR"] = "Olá"
                theme.accent = {"$color":"#FF8800"}

                """)
        let json = try StoreInspectCommand.render(file: url.path, json: true)
        #expect(
            json
                == ##"{"cart.items[0].qty":2,"cart.items[0].title":"Socks","cart.total":12.5,"labels[\"pt-BR\"]":"Olá","theme.accent":{"$color":"#FF8800"}}"##
                + "\n")
        #expect(try StoreInspectCommand.parse([url.path, "--json"]).json)
    }

    @Test func reportsACorruptOrMissingFileClearly() throws {
        let directory = try TemporaryDirectory()
        let url = directory.appending("bad.json")
        try Data(#"{"touchpointStore":1,"appID":7}"#.utf8).write(to: url)
        #expect {
            try StoreInspectCommand.render(file: url.path, json: false)
        } throws: { error in
            (error as? StoreError)?.description == "\(url.path): not a store document: appID: expected a string"
        }
        #expect {
            try StoreInspectCommand.render(file: directory.appending("none.json").path, json: false)
        } throws: { error in
            (error as? StoreError)?.code == .fileFailure
        }
    }
}

// A child process for the kill tests: records `loop` events into a directory and prints each
// event's index on its own line once `record` has returned, until it is killed.
//
//   TouchpointRecordLoop <directory> <run>
import Foundation
import TouchpointEvents

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let arguments = CommandLine.arguments
guard arguments.count == 3, let run = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: TouchpointRecordLoop <directory> <run>\n".utf8))
    exit(2)
}
let recorder = EventRecorder(directory: URL(fileURLWithPath: arguments[1], isDirectory: true))
var index = 0
while true {
    guard recorder.record("loop", properties: ["run": .int(run), "index": .int(index)]) != nil else {
        FileHandle.standardError.write(Data("record refused event \(index)\n".utf8))
        exit(1)
    }
    // Unbuffered: a line the parent sees is an event `record` has returned for.
    let line = Array("\(index)\n".utf8)
    _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    index += 1
}

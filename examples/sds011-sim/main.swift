import ArgumentParser
import Foundation
import SDS011
import SDS011Simulator

/// `sds011-sim`: an SDS011 on a pseudo-terminal, to try the hub without the sensor.
@main
struct SDS011Sim: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sds011-sim",
        abstract: "A simulated SDS011 particulate sensor on a pseudo-terminal.",
        discussion: """
            Makes a pseudo-terminal that speaks the SDS011's serial protocol (active and query mode, sleep, \
            working period, firmware version, device id) and links it at --link, then runs until interrupted. \
            Point hubd (sds011.port) or hubctl sds011 at that path.

            Examples:
              sds011-sim --link /tmp/ttySDS011 --pm25 27.4 --pm10 40
              hubctl sds011 read --port /tmp/ttySDS011
            """
    )

    @Option(help: "Where the port appears (a symlink to the pty).") var link = "/tmp/ttySDS011"
    @Option(help: "PM2.5 to report, µg/m³.") var pm25 = 12.3
    @Option(help: "PM10 to report, µg/m³.") var pm10 = 20.1
    @Option(help: "Device id, 4 hex digits.") var id = "A160"
    @Flag(help: "Send noise and broken frames before every frame.") var garbage = false
    @Option(help: "Seconds over which PM2.5 drifts up and down by this much (0: steady).") var drift = 0.0

    func run() throws {
        guard let device = SDS011DeviceID(id) else { throw ValidationError("--id is 4 hexadecimal digits, like A160") }
        let simulator = try SDS011Simulator(linkPath: link) { state in
            state.pm25 = pm25
            state.pm10 = pm10
            state.device = device
            state.garbage = garbage
        }
        print("SDS011 \(device) on \(link): PM2.5 \(pm25), PM10 \(pm10) µg/m³. Ctrl-C to stop.")
        signal(SIGINT) { _ in _exit(0) }
        signal(SIGTERM) { _ in _exit(0) }
        var phase = 0.0
        while true {
            sleep(1)
            guard drift > 0 else { continue }
            phase += 0.1
            let value = max(0, pm25 + drift * sin(phase))
            simulator.update { $0.pm25 = (value * 10).rounded() / 10 }
        }
    }
}

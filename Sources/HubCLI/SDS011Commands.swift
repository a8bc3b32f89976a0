import ArgumentParser
import Foundation
import HubCore
import SDS011

extension HubctlCommand {
    /// `hubctl sds011 …`: the particulate sensor on the serial port.
    struct SDS011Sensor: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sds011",
            abstract: "Read and set up the SDS011 particulate sensor on its serial port.",
            discussion: """
                Talks to the sensor directly, so hubd must not be using the port at the same time (hubctl says \
                so if it is). The port is --port, else the configuration's sds011.port, else /dev/ttyUSB0.

                Examples:
                  hubctl sds011 read
                  hubctl sds011 info --port /dev/ttyUSB1
                  hubctl sds011 set-period 5
                """,
            subcommands: [Read.self, Info.self, SetPeriod.self]
        )
    }
}

/// The port option the sds011 commands share.
struct PortOptions: ParsableArguments {
    @OptionGroup var state: StateOptions
    @Option(help: ArgumentHelp("The serial port.", valueName: "path")) var port: String?

    func path() async throws -> String {
        if let port { return port }
        return try await state.configuration().sds011.port ?? "/dev/ttyUSB0"
    }
}

/// Runs `body` with the sensor open, turning its errors into a message and an exit status.
func withSDS011<T>(_ path: String, _ body: (SDS011Device) throws(SDS011Error) -> T) throws -> T {
    do {
        let device = try SDS011Device(path: path)
        defer { device.close() }
        return try body(device)
    } catch {
        Failure.printError(error.description)
        switch error {
        case .permissionDenied: throw ExitCode(Failure.permissionDenied)
        case .noDevice, .notATerminal: throw ExitCode(Failure.invalidInput)
        case .busy, .unplugged, .timeout: throw ExitCode(Failure.unavailable)
        case .io: throw ExitCode(Failure.ioError)
        }
    }
}

extension HubctlCommand.SDS011Sensor {
    struct Read: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "read",
            abstract: "Take a reading: PM2.5 and PM10 with their AQI and the WHO guideline.",
            discussion: """
                Puts the sensor in query mode, wakes it, and averages --samples readings a second apart. A sensor \
                that was asleep needs about 30 s before its readings settle: give --warm-up 30s.
                """)

        @OptionGroup var options: PortOptions
        @Option(parsing: .unconditional, help: "Readings to average, a second apart.") var samples = 1
        @Option(help: "How long to let a sleeping sensor warm up first (like 30s).") var warmUp: String = "0s"
        @Flag(help: "Print the hub's JSON reading.") var json = false

        func validate() throws {
            guard (1...60).contains(samples) else { throw ValidationError("--samples is 1 to 60") }
            guard DurationText.parse(warmUp, allowingZero: true) != nil else {
                throw ValidationError("--warm-up is a duration, like 30s")
            }
        }

        func run() async throws {
            let path = try await options.path()
            let warmUp = DurationText.parse(self.warmUp, allowingZero: true) ?? .zero
            let samples = self.samples
            let readings = try withSDS011(path) { device throws(SDS011Error) -> [Reading] in
                try device.setQueryMode(true)
                try device.setWorking(true)
                if warmUp > .zero { Thread.sleep(forTimeInterval: warmUp.seconds) }
                var readings: [Reading] = []
                for index in 0..<samples {
                    readings.append(try device.query())
                    if index < samples - 1 { Thread.sleep(forTimeInterval: 1) }
                }
                return readings
            }
            let mean = readings.mean
            let reading = ParticulateReading(
                pm25: mean.pm25, pm10: mean.pm10, time: .now, device: readings[0].device.description)
            if json {
                print(reading.json)
                return
            }
            let pm25 = reading.pm25!
            let pm10 = reading.pm10!
            let aqi = AQI.index(pm25: pm25, pm10: pm10)!
            func who(_ value: Double, _ pollutant: Pollutant) -> String {
                let guideline = WHOGuideline.guideline(pollutant, .day)
                return value > guideline
                    ? "above the WHO 24 h guideline of \(ParticulateReading.trim(guideline))"
                    : "within the WHO 24 h guideline of \(ParticulateReading.trim(guideline))"
            }
            print(
                Output.aligned([
                    (
                        "PM2.5",
                        "\(ParticulateReading.format(pm25)) µg/m³ (AQI \(AQI.index(.pm25, pm25)); \(who(pm25, .pm25)))"
                    ),
                    (
                        "PM10",
                        "\(ParticulateReading.format(pm10)) µg/m³ (AQI \(AQI.index(.pm10, pm10)); \(who(pm10, .pm10)))"
                    ),
                    ("AQI", "\(aqi) \(AQI.category(aqi).name) (\(AQI.category(aqi).colour))"),
                    ("Light", AirLight(pm25: pm25, pm10: pm10).rawValue),
                    ("Sensor", "\(reading.device!) on \(path)"),
                ]).joined(separator: "\n"))
        }
    }

    struct Info: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "info",
            abstract: "Show the sensor's firmware date, id, reporting mode and working period.")

        @OptionGroup var options: PortOptions

        func run() async throws {
            let path = try await options.path()
            let (firmware, active, period) = try withSDS011(path) { device throws(SDS011Error) in
                (try device.firmware(), try device.isActiveMode(), try device.workingPeriod())
            }
            print(
                Output.aligned([
                    ("Device id", firmware.device.description),
                    ("Firmware", firmware.version),
                    ("Reporting", active ? "active (a reading every second)" : "query (when asked)"),
                    ("Working period", period == 0 ? "continuous" : "30 s every \(period) min"),
                    ("Port", path),
                ]).joined(separator: "\n"))
        }
    }

    struct SetPeriod: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-period",
            abstract: "Set the working period: 0 continuous, 1–30 minutes (work 30 s, then sleep).",
            discussion: "The sensor keeps it across power-off. hubd's own duty cycle (sds011.interval) works with 0.")

        @OptionGroup var options: PortOptions
        @Argument(help: "Minutes, 0 to 30.") var minutes: Int

        func validate() throws {
            guard (0...30).contains(minutes) else { throw ValidationError("the working period is 0 to 30 minutes") }
        }

        func run() async throws {
            let path = try await options.path()
            let minutes = self.minutes
            let confirmed = try withSDS011(path) { device throws(SDS011Error) in try device.setWorkingPeriod(minutes) }
            print(confirmed == 0 ? "working period: continuous" : "working period: 30 s every \(confirmed) min")
        }
    }
}

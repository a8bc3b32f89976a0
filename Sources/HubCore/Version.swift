/// The SensorHub release this build belongs to.
public enum SensorHubVersion {
    /// Semantic version of this build; `hubd --version` and `hubctl --version` print it.
    public static let current = "0.1.0"
}

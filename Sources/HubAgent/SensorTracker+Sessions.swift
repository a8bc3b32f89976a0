import HubCore

extension SensorTracker {
    /// `reading` of the sensor on `topic` as the stores keep it: with the sensor's id and its open session.
    public func recorded(_ reading: SensorReading, topic: String) -> RecordedReading {
        let tracked = sensors[topic]
        return RecordedReading(
            sensor: tracked?.name ?? topic, reading: reading, sensorID: tracked?.id ?? "", session: nil)
    }
}

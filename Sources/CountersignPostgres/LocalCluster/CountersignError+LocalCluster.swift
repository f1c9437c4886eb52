public import CountersignCore

extension CountersignError.Code {
    /// A local development or test cluster could not be created, started or stopped.
    public static let localClusterFailed = Self("local_cluster_failed", kind: .internalFailure)
}

/// Which release this build is: `countersign --version`, the start-up log and
/// `countersign_build_info` say it, so that an operator tells the instances of a rolling upgrade
/// apart. Raised with every release; a release that adds a migration says so in its notes.
public enum Release {
    public static let version = "0.27.4"
}

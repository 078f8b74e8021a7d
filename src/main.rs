fn main() -> std::process::ExitCode {
    fpcheck::cli::main()
}

package interop;

import java.util.Arrays;

/** Entry point: {@code client ...}, {@code server ...}, or {@code archive-record|archive-replay ...} (benchmarks). */
public final class Main
{
    private Main()
    {
    }

    /** Dispatches to {@link EchoClient} or {@link EchoServer} and exits with their code. */
    public static void main(final String[] args)
    {
        final String mode = args.length > 0 ? args[0] : "";
        final String[] rest = args.length > 0 ? Arrays.copyOfRange(args, 1, args.length) : args;
        final int code = switch (mode)
        {
            case "client" -> EchoClient.main(rest);
            case "server" -> EchoServer.main(rest);
            case "archive-record", "archive-replay" -> ArchiveThroughput.main(mode, rest);
            default ->
            {
                System.err.println("unknown mode '" + mode + "'");
                System.err.println(EchoClient.USAGE);
                System.err.println(EchoServer.USAGE);
                System.err.println(ArchiveThroughput.USAGE);
                yield EchoClient.EXIT_USAGE;
            }
        };
        System.exit(code);
    }
}

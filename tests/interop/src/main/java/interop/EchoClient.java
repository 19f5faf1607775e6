package interop;

import io.aeron.Aeron;
import io.aeron.FragmentAssembler;
import io.aeron.Publication;
import io.aeron.Subscription;
import org.agrona.concurrent.IdleStrategy;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Echo 2.0 client (docs/spec/echo2.md): HELLO on the all-clients channel, CONNECT to a
 * duologue, then N echoes that must come back verbatim.
 *
 * <p>Prints exactly one result line on stdout: {@code OK ...}, {@code ERROR <reason>},
 * {@code TIMEOUT <what>} or {@code FAIL <what>}; diagnostics go to stderr.
 */
final class EchoClient
{
    static final int EXIT_OK = 0;
    static final int EXIT_REJECTED = 1;
    static final int EXIT_TIMEOUT = 2;
    static final int EXIT_PROTOCOL = 3;
    static final int EXIT_INTERNAL = 4;
    static final int EXIT_USAGE = 64;

    static final String USAGE =
        "usage: client DIR ADDRESS PORT CONTROL_PORT [--count N] [--timeout SECONDS] [--interval-ms MS]"
        + " [--message TEXT] [--hello-only]";

    private static final String WHO = "client";
    private static final long CLOSE_GRACE_NS = TimeUnit.MILLISECONDS.toNanos(300);
    private static final long HELLO_RESEND_NS = TimeUnit.SECONDS.toNanos(1);
    private static final Pattern ERROR = Pattern.compile("ERROR (.*)");
    private static final Pattern CONNECT = Pattern.compile("CONNECT ([0-9]+) ([0-9]+) ([0-9A-F]+)");

    private final String dir;
    private final String host;
    private final int port;
    private final int controlPort;
    private final int count;
    private final long timeoutNs;
    private final long intervalNs;
    private final String fixedMessage;
    private final boolean helloOnly;
    private final SecureRandom random = new SecureRandom();
    private final IdleStrategy idle = Wire.appIdle();

    private EchoClient(
        final String dir,
        final String host,
        final int port,
        final int controlPort,
        final int count,
        final long timeoutNs,
        final long intervalNs,
        final String fixedMessage,
        final boolean helloOnly)
    {
        this.dir = dir;
        this.host = host;
        this.port = port;
        this.controlPort = controlPort;
        this.count = count;
        this.timeoutNs = timeoutNs;
        this.intervalNs = intervalNs;
        this.fixedMessage = fixedMessage;
        this.helloOnly = helloOnly;
    }

    /** Runs the client with the arguments that follow {@code client}; returns the exit code. */
    static int main(final String[] args)
    {
        final EchoClient client;
        try
        {
            client = parse(args);
        }
        catch (final IllegalArgumentException e)
        {
            System.err.println("client: " + e.getMessage());
            System.err.println(USAGE);
            return EXIT_USAGE;
        }
        try
        {
            final String summary = client.run();
            System.out.println(summary);
            return EXIT_OK;
        }
        catch (final Failure f)
        {
            System.out.println(f.getMessage());
            return f.code;
        }
        catch (final RuntimeException | Error e)
        {
            System.out.println("FAIL internal error: " + e);
            e.printStackTrace(System.err);
            return EXIT_INTERNAL;
        }
        finally
        {
            System.out.flush();
        }
    }

    private static EchoClient parse(final String[] args)
    {
        final List<String> positional = new ArrayList<>();
        int count = 5;
        double timeoutSeconds = 10.0;
        long intervalMs = 0;
        String fixedMessage = null;
        boolean helloOnly = false;
        for (int i = 0; i < args.length; i++)
        {
            final String arg = args[i];
            switch (arg)
            {
                case "--count" -> count = Args.intIn("--count", Args.value(args, ++i, arg), 0, 1_000_000);
                case "--timeout" -> timeoutSeconds = Args.positiveDouble("--timeout", Args.value(args, ++i, arg), 3600);
                case "--interval-ms" -> intervalMs = Args.intIn("--interval-ms", Args.value(args, ++i, arg), 0, 60_000);
                case "--message" -> fixedMessage = Args.value(args, ++i, arg);
                case "--hello-only" -> helloOnly = true;
                default ->
                {
                    if (arg.startsWith("--"))
                    {
                        throw new IllegalArgumentException("unknown option " + arg);
                    }
                    positional.add(arg);
                }
            }
        }
        if (positional.size() != 4)
        {
            throw new IllegalArgumentException("expected 4 positional arguments, got " + positional.size());
        }
        return new EchoClient(
            positional.get(0),
            positional.get(1),
            Args.port("PORT", positional.get(2)),
            Args.port("CONTROL_PORT", positional.get(3)),
            count,
            (long)(timeoutSeconds * 1e9),
            TimeUnit.MILLISECONDS.toNanos(intervalMs),
            fixedMessage,
            helloOnly);
    }

    private String run()
    {
        final long startNs = System.nanoTime();
        try (Wire.Embedded embedded = Wire.Embedded.launch(dir, false))
        {
            final Aeron aeron = embedded.aeron;
            final Connect connect;
            final int initialSession;
            try (Subscription sub = aeron.addSubscription(Wire.controlUri(host, controlPort, null), Wire.STREAM_ID);
                Publication pub = aeron.addPublication(Wire.endpointUri(host, port, null), Wire.STREAM_ID))
            {
                awaitConnected(pub, sub, "all-clients channel");
                initialSession = pub.sessionId();
                connect = hello(pub, sub, initialSession);
            }
            Wire.log(WHO, "[" + initialSession + "] connect " + connect.dataPort + " " + connect.controlPort
                + " session " + connect.session);
            final String where = "initial=" + initialSession + " session=" + connect.session + " data="
                + connect.dataPort + " control=" + connect.controlPort;
            if (helloOnly)
            {
                return "OK " + where + " echoes=0 hello-only";
            }
            try (Subscription sub = aeron.addSubscription(
                    Wire.controlUri(host, connect.controlPort, connect.session), Wire.STREAM_ID);
                Publication pub = aeron.addPublication(
                    Wire.endpointUri(host, connect.dataPort, connect.session), Wire.STREAM_ID))
            {
                awaitConnected(pub, sub, "duologue");
                echoes(pub, sub);
            }
            // Give the driver a moment to send end-of-stream for the closed publication, so the server
            // sees this client leave now rather than after its image liveness timeout (10 s).
            LockSupport.parkNanos(CLOSE_GRACE_NS);
            final long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
            return "OK " + where + " echoes=" + count + " elapsed_ms=" + elapsedMs;
        }
    }

    private void awaitConnected(final Publication pub, final Subscription sub, final String what)
    {
        final long deadlineNs = System.nanoTime() + timeoutNs;
        idle.reset();
        while (!(pub.isConnected() && sub.isConnected()))
        {
            if (System.nanoTime() - deadlineNs >= 0)
            {
                throw new Failure(EXIT_TIMEOUT, "TIMEOUT " + what + " not connected (publication="
                    + pub.isConnected() + ", subscription=" + sub.isConnected() + ")");
            }
            idle.idle();
        }
        Wire.log(WHO, what + " connected");
    }

    /** Sends HELLO (again every second) until this client's CONNECT or ERROR arrives. */
    private Connect hello(final Publication pub, final Subscription sub, final int sid)
    {
        final int key = random.nextInt();
        final String hello = "HELLO " + Integer.toHexString(key).toUpperCase(Locale.ROOT);
        final List<String> inbox = new ArrayList<>();
        final FragmentAssembler assembler =
            new FragmentAssembler((buffer, offset, length, header) -> inbox.add(Wire.decode(buffer, offset, length)));
        final long deadlineNs = System.nanoTime() + timeoutNs;
        long nextHelloNs = System.nanoTime();
        idle.reset();
        while (true)
        {
            final long nowNs = System.nanoTime();
            if (nowNs - deadlineNs >= 0)
            {
                throw new Failure(EXIT_TIMEOUT, "TIMEOUT no CONNECT response to " + hello);
            }
            if (nowNs - nextHelloNs >= 0)
            {
                try
                {
                    Wire.send(pub, hello, Math.min(deadlineNs, nowNs + HELLO_RESEND_NS));
                    Wire.log(WHO, "[" + sid + "] sent: " + hello);
                }
                catch (final Wire.SendFailed e)
                {
                    Wire.log(WHO, "[" + sid + "] HELLO not sent: " + e.getMessage());
                }
                nextHelloNs = System.nanoTime() + HELLO_RESEND_NS;
            }
            final int work = sub.poll(assembler, 10);
            for (final String message : inbox)
            {
                final Connect connect = onResponse(sid, key, message);
                if (connect != null)
                {
                    return connect;
                }
            }
            inbox.clear();
            idle.idle(work);
        }
    }

    /** Handles one all-clients message; returns the CONNECT for this client, or null to keep waiting. */
    private static Connect onResponse(final int sid, final int key, final String message)
    {
        final int space = message.indexOf(' ');
        if (space < 0 || !message.substring(0, space).equals(Integer.toString(sid)))
        {
            Wire.log(WHO, "[" + sid + "] ignored: " + message);
            return null;
        }
        final String rest = message.substring(space + 1).trim();
        final Matcher error = ERROR.matcher(rest);
        if (error.matches())
        {
            Wire.log(WHO, "[" + sid + "] server returned an error: " + error.group(1));
            throw new Failure(EXIT_REJECTED, "ERROR " + error.group(1));
        }
        final Matcher connect = CONNECT.matcher(rest);
        if (!connect.matches())
        {
            Wire.log(WHO, "[" + sid + "] ignored unrecognised response: " + message);
            return null;
        }
        final int dataPort = responsePort(connect.group(1), message);
        final int controlPort = responsePort(connect.group(2), message);
        final String crypt = connect.group(3);
        if (crypt.length() > 8)
        {
            throw new Failure(EXIT_PROTOCOL, "FAIL encrypted session wider than 32 bits in: " + message);
        }
        final int session = key ^ (int)Long.parseLong(crypt, 16);
        return new Connect(dataPort, controlPort, session);
    }

    private static int responsePort(final String digits, final String message)
    {
        if (digits.length() > 5 || Integer.parseInt(digits) < 1 || Integer.parseInt(digits) > 65535)
        {
            throw new Failure(EXIT_PROTOCOL, "FAIL port out of range in: " + message);
        }
        return Integer.parseInt(digits);
    }

    /** Sends {@code count} random ECHOs (or the --message text) one at a time; each reply must equal it. */
    private void echoes(final Publication pub, final Subscription sub)
    {
        final List<String> inbox = new ArrayList<>();
        final FragmentAssembler assembler =
            new FragmentAssembler((buffer, offset, length, header) -> inbox.add(Wire.decode(buffer, offset, length)));
        for (int i = 0; i < count; i++)
        {
            if (i > 0 && intervalNs > 0)
            {
                LockSupport.parkNanos(intervalNs);
            }
            final String message = fixedMessage != null ? fixedMessage : "ECHO " + Long.toHexString(random.nextLong());
            final long deadlineNs = System.nanoTime() + timeoutNs;
            try
            {
                Wire.send(pub, message, deadlineNs);
            }
            catch (final Wire.SendFailed e)
            {
                throw new Failure(EXIT_TIMEOUT, "TIMEOUT sending ECHO #" + (i + 1) + ": " + e.getMessage());
            }
            awaitEcho(sub, assembler, inbox, message, i + 1, deadlineNs);
        }
    }

    private void awaitEcho(
        final Subscription sub,
        final FragmentAssembler assembler,
        final List<String> inbox,
        final String expected,
        final int number,
        final long deadlineNs)
    {
        idle.reset();
        while (true)
        {
            final int work = sub.poll(assembler, 10);
            for (final String reply : inbox)
            {
                if (reply.equals(expected))
                {
                    inbox.clear();
                    return;
                }
                final Matcher error = ERROR.matcher(reply.trim());
                if (error.matches())
                {
                    throw new Failure(EXIT_REJECTED, "ERROR " + error.group(1));
                }
                throw new Failure(EXIT_PROTOCOL, "FAIL reply to ECHO #" + number + " was '" + reply
                    + "', expected '" + expected + "'");
            }
            if (System.nanoTime() - deadlineNs >= 0)
            {
                throw new Failure(EXIT_TIMEOUT, "TIMEOUT no reply to ECHO #" + number);
            }
            idle.idle(work);
        }
    }

    /** Ports and session of a duologue, from a CONNECT response. */
    private record Connect(int dataPort, int controlPort, int session)
    {
    }

    /** Ends the run with an exit code and a stdout result line. */
    private static final class Failure extends RuntimeException
    {
        private static final long serialVersionUID = 1L;
        final int code;

        Failure(final int code, final String line)
        {
            super(line);
            this.code = code;
        }
    }
}

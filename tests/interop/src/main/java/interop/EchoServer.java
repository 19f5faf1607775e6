package interop;

import io.aeron.Aeron;
import io.aeron.FragmentAssembler;
import io.aeron.Image;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.logbuffer.Header;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.IdleStrategy;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Minimal Echo 2.0 server following docs/spec/echo2.md sections 1-3: HELLO gets CONNECT (or
 * ERROR bad message / server full / too many connections for IP address); a duologue echoes
 * {@code ECHO <payload>} verbatim and answers anything else with {@code ERROR bad message} and
 * closes. Unconnected duologues expire; a duologue whose last client image went away is deleted.
 *
 * <p>Prints {@code READY} on stdout once its channels exist; SIGTERM/SIGINT stop it cleanly.
 */
final class EchoServer
{
    static final String USAGE = "usage: server DIR ADDRESS PORT CONTROL_PORT CLIENTS_BASE_PORT CLIENT_COUNT"
        + " [--max-per-ip N] [--expiry-seconds S]";

    private static final String WHO = "server";
    private static final Pattern HELLO = Pattern.compile("HELLO ([0-9A-F]+)");
    private static final Pattern ECHO = Pattern.compile("ECHO (.*)");
    private static final long SEND_DEADLINE_NS = TimeUnit.MILLISECONDS.toNanos(500);
    private static final long STOP_WAIT_MS = 5_000;

    private final String dir;
    private final String host;
    private final int port;
    private final int controlPort;
    private final int maxClients;
    private final int maxPerIp;
    private final long expiryNs;
    private final SecureRandom random = new SecureRandom();
    /**
     * Free ports of [base, base + 2 x count), kept by role: a port always serves as a data port
     * (even offset) or always as a control port (odd offset). A closed duologue's publication keeps
     * its control socket bound while it lingers (5 s); binding that port for a subscription would
     * fail, whereas a new publication on the same control address shares the lingering socket.
     */
    private final List<Integer> freeDataPorts = new ArrayList<>();
    private final List<Integer> freeControlPorts = new ArrayList<>();
    private final Set<Integer> sessionsInUse = new HashSet<>();
    private final Map<String, Integer> duologuesByIp = new HashMap<>();
    private final Map<Integer, Duologue> duologues = new HashMap<>();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean running = true;
    private Aeron aeron;
    private Publication allClientsPub;
    private Subscription allClientsSub;

    private EchoServer(
        final String dir,
        final String host,
        final int port,
        final int controlPort,
        final int basePort,
        final int maxClients,
        final int maxPerIp,
        final long expiryNs)
    {
        this.dir = dir;
        this.host = host;
        this.port = port;
        this.controlPort = controlPort;
        this.maxClients = maxClients;
        this.maxPerIp = maxPerIp;
        this.expiryNs = expiryNs;
        for (int i = 0; i < maxClients; i++)
        {
            freeDataPorts.add(basePort + 2 * i);
            freeControlPorts.add(basePort + 2 * i + 1);
        }
    }

    /** Runs the server with the arguments that follow {@code server}; returns the exit code. */
    static int main(final String[] args)
    {
        final EchoServer server;
        try
        {
            server = parse(args);
        }
        catch (final IllegalArgumentException e)
        {
            System.err.println("server: " + e.getMessage());
            System.err.println(USAGE);
            return EchoClient.EXIT_USAGE;
        }
        server.installStopHandlers();
        try
        {
            server.run();
            return 0;
        }
        catch (final RuntimeException | Error e)
        {
            System.out.println("FAIL " + e);
            e.printStackTrace(System.err);
            return EchoClient.EXIT_INTERNAL;
        }
        finally
        {
            server.stopped.countDown();
        }
    }

    private static EchoServer parse(final String[] args)
    {
        final List<String> positional = new ArrayList<>();
        int maxPerIp = 3;
        double expirySeconds = 10.0;
        for (int i = 0; i < args.length; i++)
        {
            final String arg = args[i];
            switch (arg)
            {
                case "--max-per-ip" -> maxPerIp = Args.intIn(arg, Args.value(args, ++i, arg), 1, 1_000_000);
                case "--expiry-seconds" -> expirySeconds = Args.positiveDouble(arg, Args.value(args, ++i, arg), 86400);
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
        if (positional.size() != 6)
        {
            throw new IllegalArgumentException("expected 6 positional arguments, got " + positional.size());
        }
        final int basePort = Args.port("CLIENTS_BASE_PORT", positional.get(4));
        final int count = Args.intIn("CLIENT_COUNT", positional.get(5), 1, 32_767);
        if (basePort + 2L * count - 1 > 65535)
        {
            throw new IllegalArgumentException("CLIENTS_BASE_PORT " + basePort + " + 2 x CLIENT_COUNT " + count
                + " exceeds port 65535");
        }
        return new EchoServer(
            positional.get(0),
            positional.get(1),
            Args.port("PORT", positional.get(2)),
            Args.port("CONTROL_PORT", positional.get(3)),
            basePort,
            count,
            maxPerIp,
            (long)(expirySeconds * 1e9));
    }

    /** SIGTERM/SIGINT end the poll loop (exit 0); the shutdown hook covers any other JVM exit. */
    @SuppressWarnings("removal")
    private void installStopHandlers()
    {
        for (final String name : new String[]{"TERM", "INT"})
        {
            try
            {
                sun.misc.Signal.handle(new sun.misc.Signal(name), signal -> running = false);
            }
            catch (final IllegalArgumentException e)
            {
                Wire.log(WHO, "cannot handle SIG" + name + ", relying on the shutdown hook: " + e.getMessage());
            }
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
        {
            running = false;
            try
            {
                if (!stopped.await(STOP_WAIT_MS, TimeUnit.MILLISECONDS))
                {
                    System.err.println("[server] shutdown hook: poll loop did not stop in time");
                }
            }
            catch (final InterruptedException e)
            {
                Thread.currentThread().interrupt();
            }
        }, "echo-server-shutdown"));
    }

    private void run()
    {
        try (Wire.Embedded embedded = Wire.Embedded.launch(dir, true))
        {
            aeron = embedded.aeron;
            allClientsPub = aeron.addPublication(Wire.controlUri(host, controlPort, null), Wire.STREAM_ID);
            allClientsSub = aeron.addSubscription(Wire.endpointUri(host, port, null), Wire.STREAM_ID);
            Wire.log(WHO, "listening on " + host + " port " + port + " control " + controlPort
                + ", max clients " + maxClients);
            System.out.println("READY");
            System.out.flush();
            final FragmentAssembler helloAssembler = new FragmentAssembler(this::onAllClientsMessage);
            final IdleStrategy idle = Wire.appIdle();
            try
            {
                while (running)
                {
                    int work = allClientsSub.poll(helloAssembler, 10);
                    work += pollDuologues();
                    idle.idle(work);
                }
            }
            finally
            {
                for (final Duologue duologue : new ArrayList<>(duologues.values()))
                {
                    delete(duologue, "server stopping");
                }
                allClientsSub.close();
                allClientsPub.close();
            }
        }
        Wire.log(WHO, "stopped");
    }

    private void onAllClientsMessage(final DirectBuffer buffer, final int offset, final int length, final Header header)
    {
        final int sid = header.sessionId();
        final String text = Wire.decode(buffer, offset, length);
        final Image image = header.context() instanceof Image i ? i : allClientsSub.imageBySessionId(sid);
        final String ip = image == null ? null : sourceIp(image.sourceIdentity());
        Wire.log(WHO, "[" + sid + "] received from " + ip + ": " + text);
        final String reply = sid + " " + onHello(text, ip);
        try
        {
            Wire.send(allClientsPub, reply, System.nanoTime() + SEND_DEADLINE_NS);
            Wire.log(WHO, "[" + sid + "] sent: " + reply);
        }
        catch (final Wire.SendFailed e)
        {
            Wire.log(WHO, "[" + sid + "] could not send '" + reply + "': " + e.getMessage());
        }
    }

    /** Applies the HELLO rules of echo2.md section 3; returns the reply without the session prefix. */
    private String onHello(final String text, final String ip)
    {
        final Matcher hello = HELLO.matcher(text);
        if (!hello.matches())
        {
            return "ERROR bad message";
        }
        final String digits = hello.group(1).replaceFirst("^0+(?=.)", "");
        if (digits.length() > 8 || ip == null)
        {
            Wire.log(WHO, ip == null ? "no image for this HELLO" : "key wider than 32 bits");
            return "ERROR bad message";
        }
        if (duologues.size() >= maxClients)
        {
            return "ERROR server full";
        }
        if (duologuesByIp.getOrDefault(ip, 0) >= maxPerIp)
        {
            return "ERROR too many connections for IP address";
        }
        final int key = (int)Long.parseLong(digits, 16);
        final Duologue duologue = allocate(ip);
        if (duologue == null)
        {
            return "ERROR server full";
        }
        final String crypt = Integer.toHexString(key ^ duologue.session).toUpperCase(Locale.ROOT);
        return "CONNECT " + duologue.dataPort + " " + duologue.controlPort + " " + crypt;
    }

    /** Allocates ports, a session id and the channels of a new duologue; null (all freed) on failure. */
    private Duologue allocate(final String ip)
    {
        if (freeDataPorts.isEmpty() || freeControlPorts.isEmpty())
        {
            Wire.log(WHO, "no free ports");
            return null;
        }
        final int dataPort = takePort(freeDataPorts);
        final int controlPort = takePort(freeControlPorts);
        final int session = takeSession();
        Publication pub = null;
        try
        {
            pub = aeron.addPublication(Wire.controlUri(host, controlPort, session), Wire.STREAM_ID);
            final Subscription sub = aeron.addSubscription(Wire.endpointUri(host, dataPort, session), Wire.STREAM_ID);
            final Duologue duologue = new Duologue(session, ip, dataPort, controlPort, pub, sub, System.nanoTime());
            duologues.put(session, duologue);
            duologuesByIp.merge(ip, 1, Integer::sum);
            Wire.log(WHO, "[" + session + "] created duologue (" + dataPort + "," + controlPort + ") for " + ip);
            return duologue;
        }
        catch (final RuntimeException e)
        {
            Wire.log(WHO, "cannot create duologue: " + e);
            if (pub != null)
            {
                pub.close();
            }
            freeDataPorts.add(dataPort);
            freeControlPorts.add(controlPort);
            sessionsInUse.remove(session);
            return null;
        }
    }

    /** Removes and returns a random port of {@code free} (which must not be empty). */
    private int takePort(final List<Integer> free)
    {
        final int index = random.nextInt(free.size());
        final int last = free.size() - 1;
        final int chosen = free.get(index);
        free.set(index, free.get(last));
        free.remove(last);
        return chosen;
    }

    /** A random unused session id in [1, 2^31 - 1); bounded by maxClients live ids, so this ends quickly. */
    private int takeSession()
    {
        for (int attempt = 0; attempt < 1_000; attempt++)
        {
            final int candidate = 1 + random.nextInt(Integer.MAX_VALUE - 1);
            if (sessionsInUse.add(candidate))
            {
                return candidate;
            }
        }
        throw new IllegalStateException("no free session id after 1000 attempts");
    }

    private int pollDuologues()
    {
        int work = 0;
        final long nowNs = System.nanoTime();
        for (final Duologue duologue : new ArrayList<>(duologues.values()))
        {
            work += duologue.poll(nowNs);
        }
        return work;
    }

    /** Closes a duologue and returns its ports, session id and per-IP count. */
    private void delete(final Duologue duologue, final String why)
    {
        if (duologues.remove(duologue.session) == null)
        {
            return;
        }
        Wire.log(WHO, "[" + duologue.session + "] deleting duologue: " + why);
        try
        {
            duologue.sub.close();
            duologue.pub.close();
        }
        finally
        {
            freeDataPorts.add(duologue.dataPort);
            freeControlPorts.add(duologue.controlPort);
            sessionsInUse.remove(duologue.session);
            duologuesByIp.computeIfPresent(duologue.ownerIp, (ip, n) -> n <= 1 ? null : n - 1);
        }
    }

    /** IP part of an Aeron source identity ({@code a.b.c.d:port} or {@code [v6]:port}). */
    static String sourceIp(final String identity)
    {
        final int colon = identity.lastIndexOf(':');
        final String address = colon < 0 ? identity : identity.substring(0, colon);
        if (address.startsWith("[") && address.endsWith("]"))
        {
            return address.substring(1, address.length() - 1);
        }
        return address;
    }

    /** One client's publication/subscription pair. */
    private final class Duologue
    {
        final int session;
        final String ownerIp;
        final int dataPort;
        final int controlPort;
        final Publication pub;
        final Subscription sub;
        final long createdNs;
        final FragmentAssembler assembler = new FragmentAssembler(this::onMessage);
        final Set<Long> ignoredImages = new HashSet<>();
        boolean everConnected;

        Duologue(
            final int session,
            final String ownerIp,
            final int dataPort,
            final int controlPort,
            final Publication pub,
            final Subscription sub,
            final long createdNs)
        {
            this.session = session;
            this.ownerIp = ownerIp;
            this.dataPort = dataPort;
            this.controlPort = controlPort;
            this.pub = pub;
            this.sub = sub;
            this.createdNs = createdNs;
        }

        /** Serves the owner's images; deletes this duologue on expiry or when its client has gone. */
        int poll(final long nowNs)
        {
            int work = 0;
            int ownerImages = 0;
            for (final Image image : sub.images())
            {
                if (!ownerIp.equals(sourceIp(image.sourceIdentity())))
                {
                    if (ignoredImages.add(image.correlationId()))
                    {
                        Wire.log(WHO, "[" + session + "] ignoring image from " + image.sourceIdentity());
                    }
                    continue;
                }
                ownerImages++;
                everConnected = true;
                work += image.poll(assembler, 10);
                if (!duologues.containsKey(session))
                {
                    return work;
                }
            }
            if (!everConnected && nowNs - createdNs > expiryNs)
            {
                delete(this, "expired, no client connected");
            }
            else if (everConnected && ownerImages == 0)
            {
                delete(this, "last client went away");
            }
            return work;
        }

        private void onMessage(final DirectBuffer buffer, final int offset, final int length, final Header header)
        {
            if (!duologues.containsKey(session))
            {
                return;
            }
            final byte[] bytes = new byte[length];
            buffer.getBytes(offset, bytes);
            final String text = new String(bytes, StandardCharsets.UTF_8);
            final boolean echo = ECHO.matcher(text).matches();
            try
            {
                Wire.send(pub, echo ? bytes : "ERROR bad message".getBytes(StandardCharsets.UTF_8),
                    System.nanoTime() + SEND_DEADLINE_NS);
            }
            catch (final Wire.SendFailed e)
            {
                delete(this, "cannot send reply: " + e.getMessage());
                return;
            }
            if (!echo)
            {
                delete(this, "bad message: " + text);
            }
        }
    }
}

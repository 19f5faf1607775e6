package interop;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.Subscription;
import io.aeron.archive.client.AeronArchive;
import io.aeron.archive.codecs.SourceLocation;
import io.aeron.logbuffer.FragmentHandler;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;

/**
 * The Java side of benchmarks/archive_throughput.py: the same record and replay runs as the
 * Python side, through Aeron's Java client and Java archive client, against the same media
 * driver and the same Archive. Prints one line: {@code RESULT <mode> count=N seconds=S recording_id=R}.
 */
final class ArchiveThroughput
{
    static final String USAGE =
        "usage: archive-record DIR CONTROL_CHANNEL STREAM SIZE COUNT\n" +
        "       archive-replay DIR CONTROL_CHANNEL RECORDING_ID STREAM COUNT";
    private static final String IPC = "aeron:ipc";

    private ArchiveThroughput()
    {
    }

    static int main(final String mode, final String[] args)
    {
        if (args.length != 5)
        {
            System.err.println(USAGE);
            return EchoClient.EXIT_USAGE;
        }
        final Aeron.Context aeronContext = new Aeron.Context().aeronDirectoryName(args[0]);
        final AeronArchive.Context archiveContext = new AeronArchive.Context()
            .controlRequestChannel(args[1])
            .controlResponseChannel("aeron:udp?endpoint=127.0.0.1:0");
        try (Aeron aeron = Aeron.connect(aeronContext);
            AeronArchive archive = AeronArchive.connect(archiveContext.aeron(aeron)))
        {
            if ("archive-record".equals(mode))
            {
                return record(aeron, archive, Integer.parseInt(args[2]), Integer.parseInt(args[3]),
                    Long.parseLong(args[4]));
            }
            return replay(aeron, archive, Long.parseLong(args[2]), Integer.parseInt(args[3]), Long.parseLong(args[4]));
        }
    }

    /** Offers COUNT messages of SIZE bytes on a recorded IPC stream; the time until all are recorded. */
    private static int record(
        final Aeron aeron, final AeronArchive archive, final int streamId, final int size, final long count)
    {
        final IdleStrategy idle = new BackoffIdleStrategy();
        final UnsafeBuffer buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(size));
        final long subscriptionId = archive.startRecording(IPC, streamId, SourceLocation.LOCAL);
        try (ExclusivePublication publication = aeron.addExclusivePublication(IPC, streamId))
        {
            final long start = System.nanoTime();
            long position = 0;
            for (long i = 0; i < count; i++)
            {
                buffer.putLong(0, i);
                while ((position = publication.offer(buffer, 0, size)) < 0)
                {
                    idle.idle();
                }
            }
            final long recordingId = archive.findLastMatchingRecording(0, IPC, streamId, publication.sessionId());
            while (archive.getRecordingPosition(recordingId) < position)
            {
                idle.idle();
            }
            final double seconds = (System.nanoTime() - start) / 1e9;
            archive.stopRecording(subscriptionId);
            System.out.println("RESULT record count=" + count + " seconds=" + seconds + " recording_id=" + recordingId);
        }
        return 0;
    }

    /** Replays RECORDING_ID onto an IPC stream; the time until COUNT messages arrived. */
    private static int replay(
        final Aeron aeron, final AeronArchive archive, final long recordingId, final int streamId, final long count)
    {
        final IdleStrategy idle = new BackoffIdleStrategy();
        final long[] received = {0};
        final FragmentHandler handler = (buffer, offset, length, header) -> received[0]++;
        final long start = System.nanoTime();
        try (Subscription subscription = archive.replay(recordingId, 0, Long.MAX_VALUE, IPC, streamId))
        {
            while (received[0] < count)
            {
                idle.idle(subscription.poll(handler, 256));
            }
        }
        final double seconds = (System.nanoTime() - start) / 1e9;
        System.out.println("RESULT replay count=" + received[0] + " seconds=" + seconds + " recording_id=" + recordingId);
        return 0;
    }
}

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import zkcontroller.jvm.KafkaLineParser;

/**
 * The JVM parse loop alone, outside Spark (compiled and run by {@code bench_jvm_parse.py}): the log is cut into
 * chunks at line ends as the job's planner does, and each config in turn parses every chunk, rounds times,
 * alternating configs. Prints one line per (round, config): thread CPU seconds, rows, and a hash of every row
 * (so two configs' outputs can be compared without Spark).
 *
 * <p>Usage: {@code JvmParseBench ROUNDS CHUNK_BYTES LOG CONFIG_JSON...}
 */
public final class JvmParseBench {
    private JvmParseBench() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        int chunkBytes = Integer.parseInt(args[1]);
        byte[] all = Files.readAllBytes(Path.of(args[2]));
        List<String> configs = new ArrayList<>();
        for (int i = 3; i < args.length; i++) configs.add(Files.readString(Path.of(args[i])));
        List<byte[]> chunks = new ArrayList<>();
        List<Long> firstLines = new ArrayList<>();
        long line = 1;
        for (int start = 0; start < all.length; ) {
            int end = Math.min(all.length, start + chunkBytes);
            while (end < all.length && all[end - 1] != '\n') end++;
            byte[] chunk = Arrays.copyOfRange(all, start, end);
            chunks.add(chunk);
            firstLines.add(line);
            for (byte b : chunk) if (b == '\n') line++;
            start = end;
        }
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        for (int round = 0; round < rounds; round++) {
            for (int c = 0; c < configs.size(); c++) {
                long cpu = threads.getCurrentThreadCpuTime();
                long rows = 0, hash = 0;
                for (int k = 0; k < chunks.size(); k++) {
                    KafkaLineParser parser = new KafkaLineParser(configs.get(c));
                    Iterator<Object[]> it = parser.rows(chunks.get(k), "bench", "log", firstLines.get(k));
                    while (it.hasNext()) {
                        Object[] row = it.next();
                        rows++;
                        hash = hash * 31 + Arrays.deepHashCode(row);
                    }
                }
                double seconds = (threads.getCurrentThreadCpuTime() - cpu) / 1e9;
                System.out.printf("round %d config %d cpu %.3f rows %d hash %d%n", round, c, seconds, rows, hash);
            }
        }
    }
}

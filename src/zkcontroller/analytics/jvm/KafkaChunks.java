package zkcontroller.jvm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructType;

/**
 * Spark entry point (called through py4j by {@code jvm_parser.py}): one task per planned chunk, each reading
 * its bytes and parsing them with {@link KafkaLineParser}, so the parse never leaves the executor JVMs.
 */
public final class KafkaChunks {
    private KafkaChunks() {
    }

    /** A chunk of the driver's plan ({@code sources.Chunk}): bytes [start, end) of a file, end -1 = to EOF. */
    public static final class Chunk implements Serializable {
        private static final long serialVersionUID = 1L;
        final String path, name, cluster;
        final long start, end, firstLine;

        Chunk(JsonNode c) {
            path = c.get("path").asText();
            name = c.get("name").asText();
            cluster = c.get("cluster").isNull() ? null : c.get("cluster").asText();
            start = c.get("start").asLong();
            end = c.get("end").asLong();
            firstLine = c.get("first_line").asLong();
        }
    }

    /** The staged rows ({@code extract.STAGED}, given as DDL) of the uncompressed Kafka-format chunks. */
    public static Dataset<Row> parse(SparkSession spark, String configJson, String chunksJson, String ddl)
            throws IOException {
        new KafkaLineParser(configJson);  // fail on the driver, at once, on a config the parser cannot use
        List<Chunk> chunks = new ArrayList<>();
        for (JsonNode c : new ObjectMapper().readTree(chunksJson)) chunks.add(new Chunk(c));
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        JavaRDD<Row> rows = jsc.parallelize(chunks, Math.max(1, chunks.size())).flatMap(new ParseChunk(configJson));
        return spark.createDataFrame(rows, StructType.fromDDL(ddl));
    }

    /** The task body: read the chunk, parse it lazily. */
    static final class ParseChunk implements FlatMapFunction<Chunk, Row> {
        private static final long serialVersionUID = 1L;
        private final String configJson;

        ParseChunk(String configJson) {
            this.configJson = configJson;
        }

        @Override
        public Iterator<Row> call(Chunk chunk) throws Exception {
            byte[] data = read(chunk);
            Iterator<Object[]> rows = new KafkaLineParser(configJson).rows(data, chunk.cluster, chunk.name,
                    chunk.firstLine);
            return new Iterator<Row>() {
                @Override
                public boolean hasNext() {
                    return rows.hasNext();
                }

                @Override
                public Row next() {
                    return RowFactory.create(rows.next());
                }
            };
        }
    }

    static byte[] read(Chunk chunk) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(chunk.path, "r")) {
            long end = chunk.end < 0 ? f.length() : chunk.end;
            long size = Math.max(0, end - chunk.start);
            if (size > Integer.MAX_VALUE - 8) throw new IOException(chunk.path + ": chunk larger than 2 GiB");
            byte[] data = new byte[(int) size];
            f.seek(chunk.start);
            f.readFully(data);
            return data;
        }
    }
}

/* PAPI_profil, the libprofiler way: this program profiles its own text while
 * it works, then prints the histogram as PAPI's test programs do, with the
 * function each bucket lies in (and each bucket's exact first address).
 *
 *   cargo build --release
 *   cc -O2 -g -rdynamic examples/profil.c -Iinclude -Ltarget/release -lprofiler -o profil
 *   LD_LIBRARY_PATH=target/release ./profil [BITS [SCALE [THRESHOLD]]]
 *
 * BITS is 16 (the default), 32 or 64; SCALE 65536 (a bucket per 2 bytes),
 * 131072 (per byte) or down to 2; THRESHOLD the nanoseconds of CPU time
 * per sample (cpu-clock), 100000 by default. -rdynamic lets dladdr name
 * the program's own functions. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <profiler.h>

/* The program's image from its first byte to the end of its text, as the
 * default linker script names them. */
extern char __executable_start[], etext[];

/* Two kinds of work, 2:1, each a chain of dependent operations. */
__attribute__((noinline)) double do_flops(long n)
{
    double x = 0.5;
    for (long i = 0; i < n; i++) {
        x = x * 0.999999 + 0.000001;
        __asm__ volatile("" : "+x"(x));
    }
    return x;
}

__attribute__((noinline)) uint64_t do_sums(long n)
{
    uint64_t x = 1;
    for (long i = 0; i < n; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

static uint64_t bucket(const void *buf, int bits, size_t i)
{
    return bits == 64 ? ((const uint64_t *)buf)[i]
         : bits == 32 ? ((const uint32_t *)buf)[i]
                      : ((const uint16_t *)buf)[i];
}

/* "function+0xOFFSET" for an address of this program, or "?". */
static void print_function(uintptr_t address)
{
    Dl_info info;
    if (dladdr((void *)address, &info) && info.dli_sname != NULL)
        printf("%s+%#" PRIxPTR "\n", info.dli_sname, address - (uintptr_t)info.dli_saddr);
    else
        printf("?\n");
}

int main(int argc, char **argv)
{
    int bits = argc > 1 ? atoi(argv[1]) : 16;
    unsigned scale = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 65536;
    long long threshold = argc > 3 ? strtoll(argv[3], NULL, 0) : 100000;
    int flag = bits == 64 ? PROF_BUCKET_64 : bits == 32 ? PROF_BUCKET_32 : PROF_BUCKET_16;

    /* One bucket for every 131072/scale bytes of text. */
    uintptr_t start = (uintptr_t)__executable_start;
    uint64_t text = (uint64_t)((uintptr_t)etext - start);
    size_t buckets = (size_t)(((text - 1) * scale >> 17) + 1);
    size_t bufsiz = buckets * (size_t)(bits / 8);
    void *buf = calloc(buckets, (size_t)(bits / 8));
    if (buf == NULL)
        return 1;

    prof_session *session;
    int rc = prof_profil(&session, buf, bufsiz, start, scale, "cpu-clock", threshold, flag);
    if (rc != PROF_OK) {
        fprintf(stderr, "prof_profil: %s\n", prof_strerror(rc));
        return 1;
    }
    if ((rc = prof_start(session)) != PROF_OK) {
        fprintf(stderr, "prof_start: %s\n", prof_strerror(rc));
        return 1;
    }
    double flops = do_flops(200000000);
    uint64_t sums = do_sums(200000000);
    if ((rc = prof_stop(session)) != PROF_OK) {
        fprintf(stderr, "prof_stop: %s\n", prof_strerror(rc));
        return 1;
    }
    prof_stats stats;
    prof_get_stats(session, &stats);
    prof_free(session);

    const char *dashes = "------------------------------------------------------------";
    printf("%s\nPAPI_profil() hash table, Bucket size: %d bits.\n", dashes, bits);
    printf("Number of buckets: %zu.\nLength of buffer: %zu bytes.\n", buckets, bufsiz);
    printf("Scale: %u (%#x). Event: cpu-clock, one sample every %lld ns.\n", scale, scale,
           threshold);
    printf("%s\naddress\t\t\tflat\tfunction\n", dashes);
    for (size_t i = 0; i < buckets; i++) {
        uint64_t count = bucket(buf, bits, i);
        if (count == 0)
            continue;
        /* The bucket's first address: offset + ceil(i * 131072 / scale).
         * (PAPI's printer uses (i * scale) >> 15, right only at 65536.) */
        uintptr_t address = start + (uintptr_t)(((uint64_t)i * 131072 + scale - 1) / scale);
        printf("%#-16" PRIxPTR "\t%" PRIu64 "\t", address, count);
        print_function(address);
    }
    printf("%s\n", dashes);
    printf("%" PRIu64 " samples: %" PRIu64 " outside the text, %" PRIu64 " saturated, %" PRIu64
           " lost by the kernel.\n",
           stats.samples, stats.outside, stats.saturated, stats.lost);
    printf("(work: %g %" PRIu64 ")\n", flops, sums & 0xff);
    free(buf);
    return 0;
}

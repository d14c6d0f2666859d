//! Each record encoding round-trips, and damage is refused.

use super::*;

fn round_trip(record: Record) {
    let mut buf = Vec::new();
    encode(&record, &mut buf);
    let (tag, len) = frame_header(buf[..FRAME_HEADER_LEN].try_into().unwrap());
    assert_eq!(len as usize, buf.len() - FRAME_HEADER_LEN);
    let decoded = decode(tag, &buf[FRAME_HEADER_LEN..]).unwrap().unwrap();
    assert_eq!(decoded, record);
}

/// A sample with every list: a call chain, a stack copy, member counts.
fn full_sample() -> Sample {
    Sample {
        time: 1,
        pid: 2,
        tid: 3,
        cpu: 4,
        event: 5,
        mode: CpuMode::User,
        ip: Avma(0x40_1000),
        period: 1,
        callchain: [u64::MAX - 511, 0x40_1000, 0x40_2345]
            .map(CallchainEntry::from_raw)
            .to_vec(),
        user_stack: Some(UserStack {
            ip: Avma(0x40_1000),
            sp: Avma(0x7ffe_0000),
            bp: Avma(0x7ffe_0040),
            bytes: (0..=255).collect(),
        }),
        read: vec![(6, 1)],
    }
}

#[test]
fn samples_decoded_into_one_are_each_as_decoded_alone() {
    let full = full_sample();
    let bare = Sample {
        time: 5,
        ip: Avma(0x40_2000),
        ..Sample::default()
    };
    let stack_only = Sample {
        user_stack: Some(UserStack {
            bytes: vec![1; 8],
            ..UserStack::default()
        }),
        ..bare.clone()
    };
    let mut into = Sample::default();
    for sample in [full.clone(), bare, stack_only, full] {
        let mut buf = Vec::new();
        encode(&Record::Sample(sample.clone()), &mut buf);
        decode_sample(&buf[FRAME_HEADER_LEN..], &mut into).unwrap();
        assert_eq!(into, sample);
    }
    // A payload cut short is an error, not a sample.
    assert!(decode_sample(&[0; SAMPLE_FIXED_LEN - 1], &mut into).is_err());
}

#[test]
fn every_record_kind_round_trips() {
    round_trip(Record::Sample(Sample {
        time: 1,
        pid: 2,
        tid: 3,
        cpu: 4,
        event: 5,
        mode: CpuMode::GuestUser,
        ip: Avma(0xffff_ffff_8100_0000),
        period: 250_000,
        callchain: Vec::new(),
        user_stack: None,
        read: Vec::new(),
    }));
    // A group leader's sample with member counts, without stacks.
    round_trip(Record::Sample(Sample {
        time: 1,
        pid: 2,
        tid: 3,
        cpu: 4,
        event: 0,
        mode: CpuMode::User,
        ip: Avma(0x40_1000),
        period: 250_000,
        callchain: Vec::new(),
        user_stack: None,
        read: vec![(1, 17), (2, u64::MAX)],
    }));
    round_trip(Record::Sample(full_sample()));
    round_trip(Record::Mmap(Mmap {
        time: 9,
        pid: 10,
        tid: 11,
        start: Avma(0x5555_0000_1000),
        len: 0x2000,
        offset: FileOffset(0x1000),
        path: "/usr/lib/x86_64-linux-gnu/libc.so.6".into(),
        build_id: Some(BuildId(vec![0xab; 20])),
    }));
    round_trip(Record::Mmap(Mmap {
        time: 9,
        pid: 10,
        tid: 11,
        start: Avma(0x7fff_0000),
        len: 0x2000,
        offset: FileOffset(0),
        path: "[vdso]".into(),
        build_id: None,
    }));
    round_trip(Record::Comm(Comm {
        time: 3,
        pid: 4,
        tid: 5,
        name: "wörker".into(),
        exec: true,
    }));
    round_trip(Record::Fork(TaskEvent {
        time: 1,
        pid: 2,
        ppid: 3,
        tid: 4,
        ptid: 5,
    }));
    round_trip(Record::Exit(TaskEvent {
        time: 1,
        pid: 2,
        ppid: 3,
        tid: 4,
        ptid: 5,
    }));
    round_trip(Record::Lost(Lost {
        time: 7,
        event: 1,
        count: 99,
    }));
    round_trip(Record::Histogram(HistogramRecord {
        event: 1,
        path: "/bin/app".into(),
        build_id: Some(BuildId(vec![7; 20])),
        start: FileOffset(0x1000),
        scale: 65536,
        buckets: Buckets::from_le_bytes(BucketWidth::Bits16, &[1, 0, 0, 2, 255, 255]).unwrap(),
    }));
    let mut bytes = vec![0; 2 * 1000];
    bytes[2 * 3] = 9;
    bytes[2 * 9 + 1] = 1;
    bytes[2 * 999] = 4;
    let buckets = Buckets::from_le_bytes(BucketWidth::Bits16, &bytes).unwrap();
    round_trip(Record::Histogram(HistogramRecord {
        event: 0,
        path: "/lib/libc.so.6".into(),
        build_id: None,
        start: FileOffset(0),
        scale: 65536,
        buckets,
    }));
    round_trip(Record::Throttle(Throttle {
        time: 7,
        event: 0,
        unthrottle: true,
    }));
    for (out, preempt, sampled) in [
        (true, true, false),
        (true, false, true),
        (false, false, false),
    ] {
        round_trip(Record::Switch(Switch {
            time: 8,
            pid: 9,
            tid: 10,
            out,
            preempt,
            sampled,
        }));
    }
}

#[test]
fn a_switch_with_its_sample_takes_under_100_bytes() {
    let mut buf = Vec::new();
    let switch = |out| {
        Record::Switch(Switch {
            time: u64::MAX,
            pid: 1,
            tid: 2,
            out,
            preempt: false,
            sampled: out,
        })
    };
    encode(&switch(true), &mut buf);
    encode(&switch(false), &mut buf);
    encode(&Record::Sample(Sample::default()), &mut buf);
    assert!(buf.len() < 100, "{}", buf.len());
}

#[test]
fn empty_buckets_are_not_written() {
    let histogram = |buckets: Vec<u8>| {
        Record::Histogram(HistogramRecord {
            event: 0,
            path: "m".into(),
            build_id: None,
            start: FileOffset(0),
            scale: 65536,
            buckets: Buckets::from_le_bytes(BucketWidth::Bits32, &buckets).unwrap(),
        })
    };
    let mut empty = Vec::new();
    encode(&histogram(vec![0; 4 * 100_000]), &mut empty);
    let mut one = Vec::new();
    let mut buckets = vec![0; 4 * 100_000];
    buckets[4 * 50_000] = 1;
    encode(&histogram(buckets), &mut one);
    assert!(empty.len() < 40, "{}", empty.len());
    assert_eq!(one.len(), empty.len() + 12);
}

/// A histogram record's payload up to its buckets: event 0 of `/bin/app`
/// from file offset `start`, 16-bit buckets at scale 65536.
fn histogram_head(start: u64) -> Vec<u8> {
    let mut out = Vec::new();
    put_u16(&mut out, 0);
    put_str(&mut out, "/bin/app");
    put_build_id(&mut out, None);
    put_u64(&mut out, start);
    put_u32(&mut out, 65536);
    out.push(16);
    out
}

#[test]
fn histograms_written_whole_still_read() {
    let mut payload = histogram_head(0x1000);
    put_u32(&mut payload, 4);
    payload.extend([0, 0, 3, 0]);
    let Ok(Some(Record::Histogram(h))) = decode(TAG_HISTOGRAM, &payload) else {
        panic!("not read");
    };
    let buckets = Buckets::from_le_bytes(BucketWidth::Bits16, &[0, 0, 3, 0]).unwrap();
    assert_eq!((h.start, h.buckets), (FileOffset(0x1000), buckets));
}

#[test]
fn a_histogram_costs_memory_for_its_runs_not_its_claim() {
    // 128 Mi buckets claimed, two counted.
    let mut payload = histogram_head(0);
    put_u32(&mut payload, 128 << 20);
    put_u32(&mut payload, 2);
    for first in [7, 100 << 20] {
        put_u32(&mut payload, first);
        put_u32(&mut payload, 1);
        payload.extend([5, 0]);
    }
    let Ok(Some(Record::Histogram(h))) = decode(TAG_SPARSE_HISTOGRAM, &payload) else {
        panic!("not read");
    };
    assert_eq!(h.buckets.len(), 128 << 20);
    assert_eq!(h.buckets.held(), 2);
    assert_eq!(h.buckets.nonzero(), [(7, 5), (100 << 20, 5)]);
}

#[test]
fn sparse_histograms_that_lie_are_refused() {
    let payload = |count: u32, runs: &[(u32, u32)], data: usize| {
        let mut out = histogram_head(0);
        put_u32(&mut out, count);
        put_u32(&mut out, runs.len() as u32);
        for &(first, len) in runs {
            put_u32(&mut out, first);
            put_u32(&mut out, len);
        }
        out.extend(std::iter::repeat_n(1, data));
        out
    };
    let decoded = |p: Vec<u8>| decode(TAG_SPARSE_HISTOGRAM, &p);
    assert!(decoded(payload(10, &[(2, 3)], 6)).is_ok());
    assert!(decoded(payload(u32::MAX, &[], 0)).is_err());
    assert!(decoded(payload(10, &[(8, 3)], 6)).is_err());
    assert!(decoded(payload(10, &[(4, 2), (3, 1)], 6)).is_err());
    assert!(decoded(payload(10, &[(2, 3)], 5)).is_err());
    assert!(decoded(payload(10, &[(u32::MAX, 2)], 4)).is_err());
}

#[test]
fn unknown_tags_are_skipped_and_short_payloads_rejected() {
    assert_eq!(decode(200, &[1, 2, 3]), Ok(None));
    assert!(decode(TAG_SAMPLE, &[0; 10]).is_err());
}

#[test]
fn overlong_strings_are_cut_at_a_character_boundary() {
    let name = "é".repeat(40_000);
    let mut buf = Vec::new();
    encode(
        &Record::Comm(Comm {
            time: 0,
            pid: 0,
            tid: 0,
            name,
            exec: false,
        }),
        &mut buf,
    );
    let (tag, _) = frame_header(buf[..FRAME_HEADER_LEN].try_into().unwrap());
    let Some(Record::Comm(c)) = decode(tag, &buf[FRAME_HEADER_LEN..]).unwrap() else {
        panic!("not a comm record")
    };
    assert!(c.name.len() <= usize::from(u16::MAX));
    assert!(c.name.chars().all(|ch| ch == 'é'));
}

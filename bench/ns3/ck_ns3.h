// ns-3 side of coflowkit's packet-engine cross-check (bench/ns3/run_ns3.py loads this through
// cppyy and drives it). Written against the ns-3.44 API; compiled at run time by cling, so every
// per-packet callback stays in C++.
//
// What it models (see bench/ns3/README.md for the reasons):
// - PortQueueDisc: one switch/host output port. 8 strict-priority FIFO bands (band = the flow's prio, found by TCP port),
//   one drop-tail buffer shared by the bands (bytes and/or packets), ECN CE marking of an arriving
//   ECT packet when the port occupancy is >= K (bytes or packets). Occupancy = bytes in this queue
//   disc + bytes in the device's 1-packet transmit queue (the packet on the wire is not counted).
// - Per-flow ECMP by address planes: host h owns one address per spine (10.s.leaf.idx+1); a flow
//   bound to plane s is routed by static routes through spine s in both directions.
// - A sender per flow (TCP socket) that writes exactly `bytes` at start_ns, and a
//   listening socket per flow at the receiver that records when the last byte arrives.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

namespace ck
{
using namespace ns3;

static const uint16_t kPortBase = 10000;

struct FlowRec
{
    uint32_t src = 0, dst = 0, prio = 0, plane = 0;
    uint64_t bytes = 0;
    int64_t start_ns = 0;
    int64_t first_data_tx_ns = -1;
    int64_t finish_ns = -1;
    uint64_t queued = 0; // bytes handed to the socket
    uint64_t rcvd = 0;
    uint64_t drops = 0, marks = 0, retx = 0, timeouts = 0;
    // ECN-Echo taking the sender out of loss recovery into CWR (TcpSocketBase::ReceivedAck
    // calls EnterCwr whenever the state is not CA_CWR): from CA_LOSS (after an RTO), from
    // CA_RECOVERY (fast recovery)
    uint64_t lossToCwr = 0, recoveryToCwr = 0;
    uint64_t recoveries = 0; // entries into CA_RECOVERY (fast retransmits)
    // ACKs the sender receives (its socket's "Rx" trace): duplicates (no payload, no SYN, the
    // highest ACK number again while data is outstanding), and ACKs that advance by exactly one
    // segment right after a duplicate (ns-3 then finds the Reno-SACKed segment at the head,
    // TcpTxBuffer::DiscardUpTo, and marks it lost: a retransmission outside recovery)
    uint64_t dupAcks = 0, oneSegAfterDup = 0;
    // Retransmission timer expiries (the "RTO" trace doubling: every expiry, repeated ones in
    // CA_LOSS included, which `timeouts` above, entries into CA_LOSS, does not count), and the
    // bytes outstanding (all marked lost, SetSentListLost) summed over entries into CA_LOSS
    uint64_t rtoExpiries = 0, lossOutstanding = 0;
    // Already delivered data resent (issue 33's long-tcp question). `got`: the segments (by
    // (seq - 1) / MSS) the receiver holds, from its socket's "Rx" trace; `dupArrivals`: data
    // segments arriving there a second time. `retxByState` / `retxHeldByState`: retransmissions
    // by the sender's congestion state when sent (CA_OPEN .. CA_LOSS), and of those the ones whose
    // segment the receiver already held. At each timer expiry: `rtoOutstanding` sums
    // highest sent - cumulative ACK, `rtoHeld` the bytes of those the receiver already held.
    std::vector<uint8_t> got;
    uint64_t dupArrivals = 0, dataArrivals = 0, dataSent = 0;
    uint64_t retxByState[5] = {0, 0, 0, 0, 0}, retxHeldByState[5] = {0, 0, 0, 0, 0};
    uint64_t rtoOutstanding = 0, rtoHeld = 0;
    // held resends by their distance from the cumulative ACK, segments: 0, 1-2, 3-10, 11-100, more
    uint64_t heldAt[5] = {0, 0, 0, 0, 0};
    uint32_t highTx = 0;
    int state = 0;
    uint32_t lastAck = 0;
    bool lastWasDup = false;
    Ptr<Socket> tx;
    Ptr<Socket> listen;
};

struct ScenarioConfig
{
    // topology
    bool leafspine = false;
    uint32_t leaves = 1, spines = 0, hostsPerLeaf = 1;
    std::string hostRate = "10Gbps", fabricRate = "10Gbps";
    int64_t hostDelayNs = 1000, fabricDelayNs = 1000;
    // packets
    uint32_t mtu = 1500, headerBytes = 40;
    // transport
    bool dctcp = false;
    bool stockDctcp = false; // true: ns-3's TcpDctcp without the 2-segment floor
    int64_t minRtoNs = 1000000;
    uint32_t initCwnd = 10;
    bool delayedAck = false;
    bool sack = false; // SACK (RFC 2018) with ns-3's RFC 6675 scoreboard; the recovery stays classic
    int64_t delAckTimeoutNs = 200000;
    double dctcpG = 0.0625;
    int64_t clockGranularityNs = 1;
    // Send and receive buffers: the largest window scaling allows (65535 << 14), so that, as in
    // coflowkit (no receive window), only the congestion window limits a flow.
    uint32_t sockBufBytes = 65535u << 14;
    // queues
    uint64_t switchBufBytes = 300000;
    int64_t ecnKBytes = -1; // -1: no marking
    int hostQueueKind = 0;  // 0 unbounded, 1 droptail packets, 2 ecn at k packets, 3 both
    uint64_t hostQueuePackets = 0;
    uint64_t hostQueueK = 0; // kind 3: the marking threshold (hostQueuePackets is the bound)
    // run
    int64_t sampleNs = 0;
    int64_t stopNs = 0; // hard stop (0: none)
    bool protectSyn = false; // handshake off: never drop a SYN / SYN-ACK
    uint32_t seed = 1;
};

ScenarioConfig cfg;
std::vector<FlowRec> flows;
uint32_t nDone = 0;
uint64_t hopTx = 0;     // packets that finished transmission on any device (PhyTxEnd)
uint64_t hopTxData = 0; // ... of which carried TCP payload
uint64_t totalDrops = 0, totalMarks = 0;
NodeContainer hosts, switches;

// queue sampling
std::vector<std::string> samplePortNames;
std::vector<Ptr<QueueDisc>> samplePorts;
std::vector<Ptr<Queue<Packet>>> samplePortDevq;
std::vector<uint32_t> qsPort;
std::vector<int64_t> qsTime;
std::vector<uint64_t> qsBytes;

// named ports, filled while building
std::vector<std::string> portNames;
std::vector<Ptr<QueueDisc>> portQd;
std::vector<Ptr<Queue<Packet>>> portDevq;

inline int FlowOfPacket(Ptr<const Packet> p)
{
    TcpHeader th;
    if (p->PeekHeader(th) == 0)
    {
        return -1;
    }
    uint32_t n = flows.size();
    uint16_t d = th.GetDestinationPort(), s = th.GetSourcePort();
    if (d >= kPortBase && d < kPortBase + n)
    {
        return d - kPortBase;
    }
    if (s >= kPortBase && s < kPortBase + n)
    {
        return s - kPortBase;
    }
    return -1;
}

// A SYN or SYN-ACK. With handshake off in the scenario, ns-3 still handshakes; a lost SYN would
// cost ns-3's connection timeout (3 s) that a handshake-free simulator cannot have. So then the
// ports admit SYNs beyond the buffer limit (counted in synAdmittedOverLimit).
uint64_t synAdmittedOverLimit = 0;

// packets refused per port (same order as portNames), and of all refused those with SYN set
std::vector<uint64_t> portDrops;
uint64_t synDrops = 0;
uint64_t payloadlessMarks = 0; // CE marks on packets without payload (ACKs, SYNs, SYN-ACKs)

inline bool IsSynOrSynAck(Ptr<QueueDiscItem> item)
{
    TcpHeader th;
    return item->GetPacket()->PeekHeader(th) != 0 && (th.GetFlags() & TcpHeader::SYN);
}

inline bool IsSyn(Ptr<QueueDiscItem> item)
{
    TcpHeader th;
    if (item->GetPacket()->PeekHeader(th) == 0 || !(th.GetFlags() & TcpHeader::SYN))
    {
        return false;
    }
    synAdmittedOverLimit++;
    return true;
}

class PortQueueDisc : public QueueDisc
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ck::PortQueueDisc")
                                .SetParent<QueueDisc>()
                                .SetGroupName("TrafficControl")
                                .AddConstructor<PortQueueDisc>();
        return tid;
    }

    PortQueueDisc()
        : QueueDisc(QueueDiscSizePolicy::NO_LIMITS)
    {
    }

    uint64_t limitBytes = UINT64_MAX, limitPackets = UINT64_MAX;
    uint32_t index = 0; // into portNames / portDrops
    uint64_t kBytes = UINT64_MAX, kPackets = UINT64_MAX;
    Ptr<Queue<Packet>> devq;

    uint64_t OccBytes() const
    {
        return GetNBytes() + (devq ? devq->GetNBytes() : 0);
    }

    uint64_t OccPackets() const
    {
        return GetNPackets() + (devq ? devq->GetNPackets() : 0);
    }

  protected:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override
    {
        uint64_t qb = OccBytes(), qp = OccPackets();
        uint32_t sz = item->GetSize();
        if ((qb + sz > limitBytes || qp + 1 > limitPackets) && !(cfg.protectSyn && IsSyn(item)))
        {
            int fd = FlowOfPacket(item->GetPacket());
            if (fd >= 0)
            {
                flows[fd].drops++;
            }
            totalDrops++;
            portDrops[index]++;
            if (IsSynOrSynAck(item))
            {
                synDrops++;
            }
            DropBeforeEnqueue(item, "buffer full");
            return false;
        }
        int f = FlowOfPacket(item->GetPacket());
        if (qb >= kBytes || qp >= kPackets)
        {
            if (Mark(item, "K")) // false when the packet is not ECT
            {
                if (f >= 0)
                {
                    flows[f].marks++;
                }
                totalMarks++;
                TcpHeader th;
                if (item->GetPacket()->PeekHeader(th) != 0 &&
                    item->GetPacket()->GetSize() == th.GetSerializedSize())
                {
                    payloadlessMarks++; // pure ACKs, SYNs and SYN-ACKs are ECT here too
                }
            }
        }
        // The band is the flow's class, looked up by TCP port, for its data, ACKs and SYNs alike.
        // Not the IP ToS: in ns-3.44 a socket with a ToS set (Socket::SetIpTos) sends its data
        // without the ECT codepoint, so a prioritised DCTCP flow would never be marked.
        uint32_t band = f >= 0 ? flows[f].prio : 0;
        return GetInternalQueue(band)->Enqueue(item);
    }

    Ptr<QueueDiscItem> DoDequeue() override
    {
        for (uint32_t b = 0; b < 8; b++)
        {
            Ptr<InternalQueue> q = GetInternalQueue(b);
            if (q->GetNPackets() > 0)
            {
                return q->Dequeue();
            }
        }
        return nullptr;
    }

    bool CheckConfig() override
    {
        if (GetNInternalQueues() == 0)
        {
            for (int b = 0; b < 8; b++)
            {
                Ptr<DropTailQueue<QueueDiscItem>> q = CreateObject<DropTailQueue<QueueDiscItem>>();
                q->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, 1000000000));
                AddInternalQueue(q);
            }
        }
        return true;
    }

    void InitializeParams() override
    {
    }
};

// ns-3.44's TcpDctcp::GetSsThresh returns (1 - alpha/2) * cwnd with no floor, so after a few
// marked windows cwnd drops below one segment; with nothing in flight the sender then waits for
// the RTO (seen in prio-dctcp: a 10 ms stall). Linux (dctcp_ssthresh) floors it at 2 segments;
// this subclass does the same and is the default (run_ns3.py --stock-dctcp uses TcpDctcp as is).
class TcpDctcpFloor : public TcpDctcp
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ck::TcpDctcpFloor")
                                .SetParent<TcpDctcp>()
                                .SetGroupName("Internet")
                                .AddConstructor<TcpDctcpFloor>();
        return tid;
    }

    TcpDctcpFloor() = default;
    TcpDctcpFloor(const TcpDctcpFloor& o) = default;

    std::string GetName() const override
    {
        return "TcpDctcpFloor";
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        return std::max<uint32_t>(TcpDctcp::GetSsThresh(tcb, bytesInFlight), 2 * tcb->m_segmentSize);
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<TcpDctcpFloor>(this);
    }
};

// ---------------------------------------------------------------- flows

// every retransmission timer expiry: flow, instant (ns)
std::vector<uint32_t> rtoLogFlow;
std::vector<int64_t> rtoLogNs;

inline bool Holds(const FlowRec& fl, uint32_t seq)
{
    uint32_t mss = cfg.mtu - cfg.headerBytes;
    uint32_t i = (seq - 1) / mss;
    return seq >= 1 && i < fl.got.size() && fl.got[i];
}

void OnTx(uint32_t f, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase> s)
{
    if (p->GetSize() > 0)
    {
        flows[f].dataSent++;
        flows[f].highTx = std::max(flows[f].highTx, h.GetSequenceNumber().GetValue() + p->GetSize());
    }
    if (p->GetSize() > 0 && flows[f].first_data_tx_ns < 0)
    {
        flows[f].first_data_tx_ns = Simulator::Now().GetNanoSeconds();
    }
}

void OnRetx(uint32_t f,
            Ptr<const Packet> p,
            const TcpHeader& h,
            const Address& a,
            const Address& b,
            Ptr<const TcpSocketBase> s)
{
    FlowRec& fl = flows[f];
    fl.retx++;
    int st = std::min(fl.state, 4);
    fl.retxByState[st]++;
    if (Holds(fl, h.GetSequenceNumber().GetValue()))
    {
        fl.retxHeldByState[st]++;
        uint32_t mss = cfg.mtu - cfg.headerBytes;
        uint32_t off = (h.GetSequenceNumber().GetValue() - std::max<uint32_t>(fl.lastAck, 1)) / mss;
        fl.heldAt[off == 0 ? 0 : off <= 2 ? 1 : off <= 10 ? 2 : off <= 100 ? 3 : 4]++;
    }
}

void OnReceiverRx(uint32_t f, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase> s)
{
    FlowRec& fl = flows[f];
    uint32_t seq = h.GetSequenceNumber().GetValue();
    if (p->GetSize() == 0 || seq < 1)
    {
        return;
    }
    fl.dataArrivals++;
    uint32_t mss = cfg.mtu - cfg.headerBytes;
    uint32_t i = (seq - 1) / mss;
    if (i >= fl.got.size())
    {
        fl.got.resize(i + 1, 0);
    }
    if (fl.got[i])
    {
        fl.dupArrivals++;
    }
    fl.got[i] = 1;
}

void OnSenderRx(uint32_t f, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase> s)
{
    FlowRec& fl = flows[f];
    if (!(h.GetFlags() & TcpHeader::ACK) || (h.GetFlags() & TcpHeader::SYN) || p->GetSize() > 0)
    {
        return;
    }
    uint32_t ack = h.GetAckNumber().GetValue();
    uint32_t mss = cfg.mtu - cfg.headerBytes;
    bool dup = ack == fl.lastAck && fl.rcvd < fl.bytes;
    if (dup)
    {
        fl.dupAcks++;
    }
    else if (fl.lastWasDup && ack == fl.lastAck + mss)
    {
        fl.oneSegAfterDup++;
    }
    fl.lastWasDup = dup;
    if (ack > fl.lastAck)
    {
        fl.lastAck = ack;
    }
}

void OnRto(uint32_t f, Time o, Time n)
{
    if (n == o + o)
    {
        FlowRec& fl = flows[f];
        fl.rtoExpiries++;
        rtoLogFlow.push_back(f);
        rtoLogNs.push_back(Simulator::Now().GetNanoSeconds());
        uint32_t una = std::max<uint32_t>(fl.lastAck, 1), mss = cfg.mtu - cfg.headerBytes;
        if (fl.highTx > una)
        {
            fl.rtoOutstanding += fl.highTx - una;
            for (uint32_t q = una; q < fl.highTx; q += mss)
            {
                fl.rtoHeld += Holds(fl, q) ? std::min(mss, fl.highTx - q) : 0;
            }
        }
    }
}

void OnCongState(uint32_t f, TcpSocketState::TcpCongState_t o, TcpSocketState::TcpCongState_t n)
{
    flows[f].state = (int)n;
    if (n == TcpSocketState::CA_LOSS && o != TcpSocketState::CA_LOSS)
    {
        flows[f].timeouts++;
        Ptr<TcpSocketBase> tb = DynamicCast<TcpSocketBase>(flows[f].tx);
        if (tb)
        {
            flows[f].lossOutstanding += tb->GetTxBuffer()->GetLost();
        }
    }
    if (n == TcpSocketState::CA_RECOVERY && o != TcpSocketState::CA_RECOVERY)
    {
        flows[f].recoveries++;
    }
    if (n == TcpSocketState::CA_CWR && o == TcpSocketState::CA_LOSS)
    {
        flows[f].lossToCwr++;
    }
    if (n == TcpSocketState::CA_CWR && o == TcpSocketState::CA_RECOVERY)
    {
        flows[f].recoveryToCwr++;
    }
}

void Fill(uint32_t f, Ptr<Socket> s)
{
    FlowRec& fl = flows[f];
    while (fl.queued < fl.bytes)
    {
        uint32_t avail = s->GetTxAvailable();
        if (avail == 0)
        {
            break;
        }
        uint64_t n = std::min<uint64_t>({(uint64_t)avail, fl.bytes - fl.queued, (uint64_t)1 << 22});
        int r = s->Send(Create<Packet>((uint32_t)n));
        if (r <= 0)
        {
            break;
        }
        fl.queued += r;
    }
}

void OnSendSpace(uint32_t f, Ptr<Socket> s, uint32_t)
{
    Fill(f, s);
}

void OnConnected(uint32_t f, Ptr<Socket> s)
{
    Fill(f, s);
}

void OnConnFail(uint32_t f, Ptr<Socket> s)
{
    std::cerr << "flow " << f << ": connection failed" << std::endl;
}

void OnRecv(uint32_t f, Ptr<Socket> s)
{
    FlowRec& fl = flows[f];
    Ptr<Packet> p;
    while ((p = s->Recv()))
    {
        fl.rcvd += p->GetSize();
    }
    if (fl.rcvd >= fl.bytes && fl.finish_ns < 0)
    {
        fl.finish_ns = Simulator::Now().GetNanoSeconds();
        nDone++;
        if (nDone == flows.size())
        {
            Simulator::Stop();
        }
    }
}

void OnAccept(uint32_t f, Ptr<Socket> s, const Address&)
{
    s->SetRecvCallback(MakeBoundCallback(&OnRecv, f));
    s->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnReceiverRx, f));
}

Ipv4Address HostAddr(uint32_t plane, uint32_t h)
{
    uint32_t leaf = h / cfg.hostsPerLeaf, idx = h % cfg.hostsPerLeaf;
    return Ipv4Address((10u << 24) | (plane << 16) | (leaf << 8) | (idx + 1));
}

void StartFlow(uint32_t f)
{
    FlowRec& fl = flows[f];
    Ptr<Socket> s = Socket::CreateSocket(hosts.Get(fl.src), TcpSocketFactory::GetTypeId());
    fl.tx = s;
    s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, f));
    s->TraceConnectWithoutContext("Retransmission", MakeBoundCallback(&OnRetx, f));
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, f));
    s->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnSenderRx, f));
    s->TraceConnectWithoutContext("RTO", MakeBoundCallback(&OnRto, f));
    s->Bind(InetSocketAddress(HostAddr(fl.plane, fl.src), 0));
    s->SetConnectCallback(MakeBoundCallback(&OnConnected, f), MakeBoundCallback(&OnConnFail, f));
    s->SetSendCallback(MakeBoundCallback(&OnSendSpace, f));
    s->Connect(InetSocketAddress(HostAddr(fl.plane, fl.dst), kPortBase + f));
}

void Sample()
{
    int64_t now = Simulator::Now().GetNanoSeconds();
    for (uint32_t i = 0; i < samplePorts.size(); i++)
    {
        uint64_t b = samplePorts[i]->GetNBytes() + (samplePortDevq[i] ? samplePortDevq[i]->GetNBytes() : 0);
        qsPort.push_back(i);
        qsTime.push_back(now);
        qsBytes.push_back(b);
    }
    if (nDone < flows.size())
    {
        Simulator::Schedule(NanoSeconds(cfg.sampleNs), &Sample);
    }
}

void CountPhyTx(Ptr<const Packet> p)
{
    hopTx++;
    // PPP header + IP header + TCP header (20, no options on data segments) = 42
    if (p->GetSize() > 42 + 8)
    {
        hopTxData++;
    }
}

// ---------------------------------------------------------------- API for Python

void Reset()
{
    cfg = ScenarioConfig();
    flows.clear();
    nDone = 0;
    hopTx = hopTxData = totalDrops = totalMarks = synAdmittedOverLimit = 0;
    samplePortNames.clear();
    qsPort.clear();
    qsTime.clear();
    qsBytes.clear();
    rtoLogFlow.clear();
    rtoLogNs.clear();
}

void AddFlow(uint32_t src, uint32_t dst, int64_t start_ns, uint64_t bytes, uint32_t prio, uint32_t plane)
{
    FlowRec r;
    r.src = src;
    r.dst = dst;
    r.start_ns = start_ns;
    r.bytes = bytes;
    r.prio = prio;
    r.plane = plane;
    flows.push_back(r);
}

void AddSamplePort(const std::string& name)
{
    samplePortNames.push_back(name);
}

Ptr<PortQueueDisc> InstallPort(Ptr<NetDevice> dev, const std::string& name, bool isHost)
{
    TrafficControlHelper tch;
    tch.SetRootQueueDisc("ck::PortQueueDisc");
    QueueDiscContainer qc = tch.Install(dev);
    Ptr<PortQueueDisc> q = DynamicCast<PortQueueDisc>(qc.Get(0));
    q->devq = DynamicCast<PointToPointNetDevice>(dev)->GetQueue();
    if (isHost)
    {
        if (cfg.hostQueueKind == 1)
        {
            q->limitPackets = cfg.hostQueuePackets;
        }
        else if (cfg.hostQueueKind == 2)
        {
            q->kPackets = cfg.hostQueuePackets;
        }
        else if (cfg.hostQueueKind == 3)
        {
            q->limitPackets = cfg.hostQueuePackets;
            q->kPackets = cfg.hostQueueK;
        }
    }
    else
    {
        q->limitBytes = cfg.switchBufBytes;
        if (cfg.ecnKBytes >= 0)
        {
            q->kBytes = (uint64_t)cfg.ecnKBytes;
        }
    }
    q->index = portNames.size();
    portNames.push_back(name);
    portDrops.push_back(0);
    portQd.push_back(q);
    portDevq.push_back(q->devq);
    return q;
}

uint32_t AddIf(Ptr<Node> n, Ptr<NetDevice> d, Ipv4Address a, Ipv4Mask m)
{
    Ptr<Ipv4> ip = n->GetObject<Ipv4>();
    int32_t i = ip->AddInterface(d);
    ip->AddAddress(i, Ipv4InterfaceAddress(a, m));
    ip->SetUp(i);
    return (uint32_t)i;
}

std::string Build()
{
    PortQueueDisc::GetTypeId(); // register the type before the helper looks it up by name
    RngSeedManager::SetSeed(cfg.seed);
    uint32_t mss = cfg.mtu - cfg.headerBytes;
    ns3::Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(!cfg.dctcp ? TcpNewReno::GetTypeId()
                                   : cfg.stockDctcp ? TcpDctcp::GetTypeId()
                                                    : TcpDctcpFloor::GetTypeId()));
    ns3::Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(TcpClassicRecovery::GetTypeId()));
    ns3::Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    ns3::Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(cfg.initCwnd));
    ns3::Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(cfg.delayedAck ? 2 : 1));
    ns3::Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(NanoSeconds(cfg.delAckTimeoutNs)));
    ns3::Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(cfg.sockBufBytes));
    ns3::Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(cfg.sockBufBytes));
    ns3::Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(cfg.sack));
    ns3::Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    ns3::Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    ns3::Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(NanoSeconds(cfg.minRtoNs)));
    ns3::Config::SetDefault("ns3::TcpSocketBase::ClockGranularity",
                       TimeValue(NanoSeconds(cfg.clockGranularityNs)));
    // Set both ways: Config defaults are process-wide and outlive a run (run_ns3.py --many).
    ns3::Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue(cfg.dctcp ? "On" : "Off"));
    ns3::Config::SetDefault("ns3::TcpDctcp::DctcpShiftG", DoubleValue(cfg.dctcpG));

    uint32_t nHosts = cfg.leaves * cfg.hostsPerLeaf;
    hosts = NodeContainer();
    switches = NodeContainer();
    hosts.Create(nHosts);
    uint32_t nLeaf = cfg.leaves;
    uint32_t nSpine = cfg.leafspine ? cfg.spines : 0;
    switches.Create(nLeaf + nSpine); // leaves first, then spines
    InternetStackHelper stack;
    Ipv4StaticRoutingHelper staticRouting;
    stack.SetRoutingHelper(staticRouting);
    stack.SetIpv6StackInstall(false);
    stack.Install(hosts);
    stack.Install(switches);

    PointToPointHelper hostLink, fabLink;
    hostLink.SetDeviceAttribute("DataRate", StringValue(cfg.hostRate));
    hostLink.SetDeviceAttribute("Mtu", UintegerValue(mss + 40));
    hostLink.SetChannelAttribute("Delay", TimeValue(NanoSeconds(cfg.hostDelayNs)));
    hostLink.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));
    fabLink.SetDeviceAttribute("DataRate", StringValue(cfg.fabricRate));
    fabLink.SetDeviceAttribute("Mtu", UintegerValue(mss + 40));
    fabLink.SetChannelAttribute("Delay", TimeValue(NanoSeconds(cfg.fabricDelayNs)));
    fabLink.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));

    portNames.clear();
    portDrops.clear();
    synDrops = 0;
    payloadlessMarks = 0;
    portQd.clear();
    portDevq.clear();
    Ipv4Mask m32("255.255.255.255");
    uint32_t swAddr = 0;
    auto nextSw = [&swAddr]() {
        swAddr++;
        return Ipv4Address((11u << 24) | swAddr);
    };
    uint32_t planes = std::max<uint32_t>(1, nSpine);
    // host links
    std::vector<uint32_t> leafIfToHost(nHosts);
    for (uint32_t h = 0; h < nHosts; h++)
    {
        uint32_t leaf = h / cfg.hostsPerLeaf;
        NetDeviceContainer d = hostLink.Install(hosts.Get(h), switches.Get(leaf));
        InstallPort(d.Get(0), "host-" + std::to_string(h), true);
        InstallPort(d.Get(1), "to-host-" + std::to_string(h), false);
        Ptr<Ipv4> ip = hosts.Get(h)->GetObject<Ipv4>();
        int32_t i = ip->AddInterface(d.Get(0));
        for (uint32_t p = 0; p < planes; p++)
        {
            ip->AddAddress(i, Ipv4InterfaceAddress(HostAddr(p, h), Ipv4Mask("255.0.0.0")));
        }
        ip->SetUp(i);
        staticRouting.GetStaticRouting(ip)->SetDefaultRoute(Ipv4Address("0.0.0.0"), i);
        leafIfToHost[h] = AddIf(switches.Get(leaf), d.Get(1), nextSw(), m32);
    }
    // fabric links
    std::vector<std::vector<uint32_t>> leafIfToSpine(nLeaf, std::vector<uint32_t>(nSpine));
    std::vector<std::vector<uint32_t>> spineIfToLeaf(nSpine, std::vector<uint32_t>(nLeaf));
    for (uint32_t l = 0; l < nLeaf; l++)
    {
        for (uint32_t s = 0; s < nSpine; s++)
        {
            NetDeviceContainer d = fabLink.Install(switches.Get(l), switches.Get(nLeaf + s));
            InstallPort(d.Get(0), "leaf-" + std::to_string(l) + "-to-spine-" + std::to_string(s), false);
            InstallPort(d.Get(1), "spine-" + std::to_string(s) + "-to-leaf-" + std::to_string(l), false);
            leafIfToSpine[l][s] = AddIf(switches.Get(l), d.Get(0), nextSw(), m32);
            spineIfToLeaf[s][l] = AddIf(switches.Get(nLeaf + s), d.Get(1), nextSw(), m32);
        }
    }
    // static routes: local hosts by /32 on every plane, other leaves' planes through their spine
    for (uint32_t l = 0; l < nLeaf; l++)
    {
        Ptr<Ipv4StaticRouting> r = staticRouting.GetStaticRouting(switches.Get(l)->GetObject<Ipv4>());
        for (uint32_t i = 0; i < cfg.hostsPerLeaf; i++)
        {
            uint32_t h = l * cfg.hostsPerLeaf + i;
            for (uint32_t p = 0; p < planes; p++)
            {
                r->AddHostRouteTo(HostAddr(p, h), leafIfToHost[h]);
            }
        }
        for (uint32_t s = 0; s < nSpine; s++)
        {
            r->AddNetworkRouteTo(Ipv4Address((10u << 24) | (s << 16)), Ipv4Mask("255.255.0.0"), leafIfToSpine[l][s]);
        }
    }
    for (uint32_t s = 0; s < nSpine; s++)
    {
        Ptr<Ipv4StaticRouting> r = staticRouting.GetStaticRouting(switches.Get(nLeaf + s)->GetObject<Ipv4>());
        for (uint32_t l = 0; l < nLeaf; l++)
        {
            r->AddNetworkRouteTo(Ipv4Address((10u << 24) | (s << 16) | (l << 8)), Ipv4Mask("255.255.255.0"), spineIfToLeaf[s][l]);
        }
    }
    // per-hop transmission counter on every device
    for (uint32_t n = 0; n < NodeList::GetNNodes(); n++)
    {
        Ptr<Node> node = NodeList::GetNode(n);
        for (uint32_t d = 0; d < node->GetNDevices(); d++)
        {
            Ptr<PointToPointNetDevice> p2p = DynamicCast<PointToPointNetDevice>(node->GetDevice(d));
            if (p2p)
            {
                p2p->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&CountPhyTx));
            }
        }
    }
    // queue samples
    samplePorts.clear();
    samplePortDevq.clear();
    for (const std::string& name : samplePortNames)
    {
        auto it = std::find(portNames.begin(), portNames.end(), name);
        if (it == portNames.end())
        {
            return "queue_ports: no port named " + name;
        }
        size_t k = it - portNames.begin();
        samplePorts.push_back(portQd[k]);
        samplePortDevq.push_back(portDevq[k]);
    }
    if (flows.size() + kPortBase >= 49152)
    {
        return "flows: at most " + std::to_string(49152 - kPortBase - 1) + " flows (one port per flow)";
    }
    // receivers and senders
    for (uint32_t f = 0; f < flows.size(); f++)
    {
        FlowRec& fl = flows[f];
        Ptr<Socket> ls = Socket::CreateSocket(hosts.Get(fl.dst), TcpSocketFactory::GetTypeId());
        ls->Bind(InetSocketAddress(Ipv4Address::GetAny(), kPortBase + f));
        ls->Listen();
        ls->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                              MakeBoundCallback(&OnAccept, f));
        fl.listen = ls;
        Simulator::Schedule(NanoSeconds(fl.start_ns), &StartFlow, f);
    }
    if (cfg.sampleNs > 0 && !samplePorts.empty())
    {
        Simulator::Schedule(NanoSeconds(0), &Sample);
    }
    if (cfg.stopNs > 0)
    {
        Simulator::Stop(NanoSeconds(cfg.stopNs));
    }
    return "";
}

void Run()
{
    Simulator::Run();
}

int64_t NowNs()
{
    return Simulator::Now().GetNanoSeconds();
}

uint64_t EventCount()
{
    return Simulator::GetEventCount();
}

void Destroy()
{
    for (auto& f : flows)
    {
        f.tx = nullptr;
        f.listen = nullptr;
    }
    samplePorts.clear();
    samplePortDevq.clear();
    portQd.clear();
    portDevq.clear();
    Simulator::Destroy();
}

} // namespace ck

// A cuzk client as Curio's lib/cuzk/client.go dials one: grpc-go, no TLS, 256 MiB messages
// both ways, a bare host:port as dns:///host:port, unix:///path as it is. Built by
// tests/test_cuzk_gateway.py from Debian's golang-go and golang-google-grpc-dev against
// client/cuzk/proving.proto; it shares no code with the Python server.
//
//	cuzkclient ADDR prove    REQUEST.json   (vanilla proofs read from the files it names)
//	cuzkclient ADDR submit   REQUEST.json
//	cuzkclient ADDR await    JOB_ID TIMEOUT_MS
//	cuzkclient ADDR cancel   JOB_ID
//	cuzkclient ADDR status | metrics
//	cuzkclient ADDR preload | evict CIRCUIT_ID
//
// Prints the response as one JSON line; a gRPC error as {"code", "message"}, exit 3.
// PROOFQ_TOKEN, when set, goes out as "authorization: Bearer <token>"; PROOFQ_TLS_CA, when
// set, dials TLS trusting that PEM certificate (Curio itself dials without TLS).
package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/ioutil"
	"os"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	cuzk "cuzkclient/cuzk"
)

// request is a SubmitProofRequest as the test writes it; bytes fields as files or hex.
type request struct {
	RequestID        string `json:"request_id"`
	ProofKind        int32  `json:"proof_kind"`
	SectorSize       uint64 `json:"sector_size"`
	RegisteredProof  uint64 `json:"registered_proof"`
	Priority         int32  `json:"priority"`
	VanillaProofFile string `json:"vanilla_proof_file"`
	VanillaProofPad  int    `json:"vanilla_proof_pad"` // bytes of padding appended (size tests)
	// PoSt and SnapDeals: one file per vanilla proof, the rest as hex.
	VanillaProofsFiles []string `json:"vanilla_proofs_files"`
	SectorNumber       uint64   `json:"sector_number"`
	MinerID            uint64   `json:"miner_id"`
	Randomness         string   `json:"randomness"`
	PartitionIndex     uint32   `json:"partition_index"`
	CommROld           string   `json:"comm_r_old"`
	CommRNew           string   `json:"comm_r_new"`
	CommDNew           string   `json:"comm_d_new"`
	NoSubmit           bool     `json:"no_submit"`
	TimeoutMs          int64    `json:"timeout_ms"`
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: cuzkclient ADDR COMMAND [ARGS]")
		os.Exit(2)
	}
	target := os.Args[1]
	if !strings.Contains(target, "://") && !strings.HasPrefix(target, "unix:") {
		target = "dns:///" + target
	}
	security := grpc.WithInsecure()
	if ca := os.Getenv("PROOFQ_TLS_CA"); ca != "" {
		creds, err := credentials.NewClientTLSFromFile(ca, "")
		if err != nil {
			fail(err)
		}
		security = grpc.WithTransportCredentials(creds)
	}
	conn, err := grpc.Dial(target, security,
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20), grpc.MaxCallSendMsgSize(256<<20)))
	if err != nil {
		fail(err)
	}
	defer conn.Close()
	svc := cuzk.NewProvingEngineClient(conn)
	ctx := context.Background()
	if token := os.Getenv("PROOFQ_TOKEN"); token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	args := os.Args[3:]
	var out interface{}
	switch os.Args[2] {
	case "prove", "submit":
		req, timeout := readRequest(args[0])
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		if os.Args[2] == "submit" {
			out, err = svc.SubmitProof(ctx, req)
		} else if req == nil {
			out, err = svc.Prove(ctx, &cuzk.ProveRequest{})
		} else {
			out, err = svc.Prove(ctx, &cuzk.ProveRequest{Submit: req})
		}
	case "await":
		ms, _ := strconv.ParseUint(args[1], 10, 64)
		out, err = svc.AwaitProof(ctx, &cuzk.AwaitProofRequest{JobId: args[0], TimeoutMs: ms})
	case "cancel":
		out, err = svc.CancelProof(ctx, &cuzk.CancelProofRequest{JobId: args[0]})
	case "status":
		out, err = svc.GetStatus(ctx, &cuzk.GetStatusRequest{})
	case "metrics":
		out, err = svc.GetMetrics(ctx, &cuzk.GetMetricsRequest{})
	case "preload":
		out, err = svc.PreloadSRS(ctx, &cuzk.PreloadSrsRequest{CircuitId: args[0]})
	case "evict":
		out, err = svc.EvictSRS(ctx, &cuzk.EvictSrsRequest{CircuitId: args[0]})
	default:
		fmt.Fprintln(os.Stderr, "unknown command", os.Args[2])
		os.Exit(2)
	}
	if err != nil {
		fail(err)
	}
	text, _ := json.Marshal(out)
	fmt.Println(string(text))
}

func readRequest(path string) (*cuzk.SubmitProofRequest, time.Duration) {
	raw, err := ioutil.ReadFile(path)
	if err != nil {
		fail(err)
	}
	var r request
	if err := json.Unmarshal(raw, &r); err != nil {
		fail(err)
	}
	timeout := time.Duration(r.TimeoutMs) * time.Millisecond
	if r.NoSubmit {
		return nil, timeout
	}
	var vanilla []byte
	if r.VanillaProofFile != "" {
		if vanilla, err = ioutil.ReadFile(r.VanillaProofFile); err != nil {
			fail(err)
		}
	}
	vanilla = append(vanilla, make([]byte, r.VanillaProofPad)...)
	var proofs [][]byte
	for _, name := range r.VanillaProofsFiles {
		proof, err := ioutil.ReadFile(name)
		if err != nil {
			fail(err)
		}
		proofs = append(proofs, proof)
	}
	return &cuzk.SubmitProofRequest{
		RequestId:       r.RequestID,
		ProofKind:       cuzk.ProofKind(r.ProofKind),
		SectorSize:      r.SectorSize,
		RegisteredProof: r.RegisteredProof,
		Priority:        cuzk.Priority(r.Priority),
		VanillaProof:    vanilla,
		VanillaProofs:   proofs,
		SectorNumber:    r.SectorNumber,
		MinerId:         r.MinerID,
		Randomness:      unhex(r.Randomness),
		PartitionIndex:  r.PartitionIndex,
		CommROld:        unhex(r.CommROld),
		CommRNew:        unhex(r.CommRNew),
		CommDNew:        unhex(r.CommDNew),
	}, timeout
}

func unhex(text string) []byte {
	raw, err := hex.DecodeString(text)
	if err != nil {
		fail(err)
	}
	return raw
}

func fail(err error) {
	st, _ := status.FromError(err)
	text, _ := json.Marshal(map[string]string{"code": st.Code().String(), "message": st.Message()})
	fmt.Println(string(text))
	os.Exit(3)
}

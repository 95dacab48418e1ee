pragma circom 2.0.0;
template Mul(N) {
    signal input a;
    signal input b;
    signal output c;
    signal x[N];
    x[0] <== a * b;
    for (var i = 1; i < N; i++) { x[i] <== x[i-1] * b + i; }
    c <== x[N-1];
}
component main {public [a]} = Mul(20);

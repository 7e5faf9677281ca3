#!/usr/bin/env python3
# Independent reference values for internal/model tests (pure python3, no scipy/numpy).
# Run: python3 internal/model/testdata/reference.py
# Independent reference for popmon model on EPOCH: brute-force weighted LS over f in [0,1]
# (grid step 1e-5 then local refinement), x0 closed form; values from modelfactors.csv (percent).
P=[1,2,4,8,16]
LB=[100.000000,99.760930,98.687584,98.280683,99.248259]
CE=[99.925583,99.616405,98.644580,97.382042,95.871892]
CS=[100.000000,95.500319,92.390414,81.340933,61.436394]
PE=[99.925583,99.378252,97.349953,95.707736,95.151184]
GE=[99.925583,94.906548,89.942024,77.849566,58.457456]
IPCS=[100.000000,99.916598,99.745711,93.982492,82.262861]
INS=[100.000000,96.748633,95.788940,94.145829,91.017467]
FRS=[100.000000,98.792129,96.697961,91.930815,82.053509]
RT=[21898659.14,11528373.56,6082352.21,3513565.33,2339560.72]
UT=[21882362.82,22913392.37,23684668.07,26902030.73,35617915.65]
INSTR=[84790848422,87640358419,88518412143,90063308642,93158874793]
import math,sys
def g(model,x,f):
    if model=='amdahl': return 1/(f+(1-f)*x)
    if model=='pipe': return x/((1-f)+f*(2*x-1))
def fit(model,xs,ys,ws):
    if model=='linear':
        # y = x0 + f x, weighted LS, f clamped to [0,1]
        def x0for(f): return sum(w*(y-f*x) for x,y,w in zip(xs,ys,ws))/sum(ws)
        W=sum(ws); xm=sum(w*x for x,w in zip(xs,ws))/W; ym=sum(w*y for y,w in zip(ys,ws))/W
        f=sum(w*(x-xm)*(y-ym) for x,y,w in zip(xs,ys,ws))/sum(w*(x-xm)**2 for x,w in zip(xs,ws))
        f=min(1,max(0,f)); return x0for(f),f
    def sse(f):
        gs=[g(model,x,f) for x in xs]
        x0=sum(w*y*gg for y,gg,w in zip(ys,gs,ws))/sum(w*gg*gg for gg,w in zip(gs,ws))
        return sum(w*(y-x0*gg)**2 for y,gg,w in zip(ys,gs,ws)),x0
    N=100000
    best=min(range(N+1),key=lambda i:sse(i/N)[0])
    lo=max(0,(best-1)/N); hi=min(1,(best+1)/N)
    for _ in range(200):
        m1=lo+(hi-lo)/3; m2=hi-(hi-lo)/3
        if sse(m1)[0]<sse(m2)[0]: hi=m2
        else: lo=m1
    f=(lo+hi)/2
    return sse(f)[1],f
def ev(model,p,x0,f):
    if model=='linear': return x0+f*p
    return x0*g(model,p,f)
fitidx=[0,1,2]
xs=[P[i] for i in fitidx]; ws=[1/0.1**2]+[1]*(len(xs)-1)
for model in ['amdahl','pipe','linear']:
    fits={}
    for name,ys in [('LB',LB),('CE',CE),('CS',CS),('PE',PE),('GE',GE),('IPCS',IPCS),('INS',INS),('FRS',FRS)]:
        fits[name]=fit(model,xs,[ys[i] for i in fitidx],ws)
        print(model,name,'x0=%.10g f=%.10g'%fits[name])
    for p in [8,16,32,64]:
        ge=1
        for n in ['LB','CE','CS']: ge*=ev(model,p,*fits[n])/100
        T=UT[0]/(p*ge)/1e6
        print(model,'P=%d GE=%.6f T=%.6f s'%(p,ge,T))
# runtime Amdahl: T = A + B/P
def amdahl_rt(xs,ts,mode):
    if mode=='ls':
        n=len(xs); u=[1/x for x in xs]
        um=sum(u)/n; tm=sum(ts)/n
        B=sum((a-um)*(t-tm) for a,t in zip(u,ts))/sum((a-um)**2 for a in u); A=tm-B*um
        return A,B
ts=[RT[i]/1e6 for i in fitidx]
A,B=amdahl_rt(xs,ts,'ls'); print('LS A+B/P: A=%.6f B=%.6f s=%.6f T8=%.6f T16=%.6f'%(A,B,A/(A+B),A+B/8,A+B/16))
# T1 fixed, s by LS
T1=ts[0]
num=sum((t-T1/x)*(T1-T1/x) for x,t in zip(xs,ts)); den=sum((T1-T1/x)**2 for x in xs)
s=num/den; print('T1 fixed: s=%.6f T8=%.6f T16=%.6f'%(s,T1*(s+(1-s)/8),T1*(s+(1-s)/16)))
print('---- runtime Amdahl variants')
def gss(fn,lo,hi):
    for _ in range(300):
        m1=lo+(hi-lo)/3; m2=hi-(hi-lo)/3
        if fn(m1)<fn(m2): hi=m2
        else: lo=m1
    return (lo+hi)/2
sp=[ts[0]/t for t in ts]
s=gss(lambda s: sum((S-1/(s+(1-s)/x))**2 for x,S in zip(xs,sp)),0,1); print('speedup LS s=%.6f T8=%.6f T16=%.6f'%(s,T1*(s+(1-s)/8),T1*(s+(1-s)/16)))
s=gss(lambda s: sum(((T1*(s+(1-s)/x))/t-1)**2 for x,t in zip(xs,ts)),0,1); print('relative T1 fixed s=%.6f T8=%.6f T16=%.6f'%(s,T1*(s+(1-s)/8),T1*(s+(1-s)/16)))
s=gss(lambda s: sum((math.log(T1*(s+(1-s)/x))-math.log(t))**2 for x,t in zip(xs,ts)),0,1); print('log T1 fixed s=%.6f T8=%.6f T16=%.6f'%(s,T1*(s+(1-s)/8),T1*(s+(1-s)/16)))
for i in [1,2]:
  s=(ts[i]/T1-1/xs[i])/(1-1/xs[i]); print('from P=%d exact s=%.6f T8=%.6f T16=%.6f'%(xs[i],s,T1*(s+(1-s)/8),T1*(s+(1-s)/16)))
# weighted sigma first on T with A,B
def wls(xs,ts,ws):
    u=[1/x for x in xs]; W=sum(ws)
    um=sum(w*a for a,w in zip(u,ws))/W; tm=sum(w*t for t,w in zip(ts,ws))/W
    B=sum(w*(a-um)*(t-tm) for a,t,w in zip(u,ts,ws))/sum(w*(a-um)**2 for a,w in zip(u,ws)); A=tm-B*um
    return A,B
A,B=wls(xs,ts,ws); print('sigma-first A+B/P: s=%.6f T8=%.6f T16=%.6f'%(A/(A+B),A+B/8,A+B/16))
A,B=wls(xs,ts,[1/t**2 for t in ts]); print('relative A+B/P: s=%.6f T8=%.6f T16=%.6f'%(A/(A+B),A+B/8,A+B/16))

# ---- component model
P=[1,2,4,8,16]
RT=[21898659.14,11528373.56,6082352.21,3513565.33,2339560.72]
UMAX=[21882362.82,11484151.34,5999910.80,3421581.67,2242981.13]
UT=[21882362.82,22913392.37,23684668.07,26902030.73,35617915.65]
INS=[84790848422,87640358419,88518412143,90063308642,93158874793]
CYC=[45294421893,46855679955,47406198069,51191361663,60494538119]
laws={'const':lambda x:0,'log2':math.log2,'sqrt':math.sqrt,'linear':lambda x:x}
def fitlaw(l,xs,ys):
    if l=='const': return (sum(ys)/len(ys),0)
    g=[laws[l](x) for x in xs]; n=len(xs); gm=sum(g)/n; ym=sum(ys)/n
    b=sum((a-gm)*(y-ym) for a,y in zip(g,ys))/sum((a-gm)**2 for a in g); return (ym-b*gm,b)
def ev(l,c,x): return c[0]+c[1]*laws[l](x)
def choose(xs,ys):
    res=[]
    for l in ['const','log2','sqrt','linear']:
        errs=[]
        for i in range(len(xs)):
            c=fitlaw(l,xs[:i]+xs[i+1:],ys[:i]+ys[i+1:]); errs.append(ev(l,c,xs[i])/ys[i]-1)
        res.append((math.sqrt(sum(e*e for e in errs)/len(errs)),l))
        print('  ',l,'loo=%.6f'%res[-1][0])
    e,l=min(res); return l,fitlaw(l,xs,ys)
xs=[1,2,4]
I=[float(v) for v in INS[:3]]
l,c=choose(xs,I); print('instr law',l,c,'I16=%.1f err=%.4f%%'%(ev(l,c,16),(ev(l,c,16)/INS[4]-1)*100), 'I8=%.1f'%ev(l,c,8))
ipc=INS[2]/CYC[2]; f=CYC[2]/(UT[2]/1e6); print('ipc4=%.6f f4=%.6f ipc16=%.6f'%(ipc,f,INS[4]/CYC[4]))
LB=[UT[i]/(P[i]*UMAX[i]) for i in range(3)]
ll,lc=choose(xs,LB); print('LB law',ll,lc)
REST=[(RT[i]-UMAX[i])/1e6 for i in range(3)]
rl,rc=choose(xs,REST); print('rest law',rl,rc)
for x in [8,16]:
    T=ev(l,c,x)/(ipc*f)/(x*ev(ll,lc,x))+ev(rl,rc,x)
    print('T(%d)=%.6f'%(x,T))

import csv, sys, collections
lines=[l for l in open(sys.argv[1]) if not l.startswith('==')]
rows=list(csv.reader(lines)); hdr=rows[0]
ki=hdr.index('Kernel Name'); mi=hdr.index('Metric Name'); vi=hdr.index('Metric Value'); idi=hdr.index('ID')
k=collections.OrderedDict()
for r in rows[1:]:
    if len(r)<len(hdr): continue
    d=k.setdefault(r[idi],{'name':r[ki],'grid':r[hdr.index('Grid Size')],'block':r[hdr.index('Block Size')]})
    d[r[mi]]=r[vi]
# group by problem: kernels between fills
probs=[l.strip().split(',') for l in open(sys.argv[2])][1:]
groups=[]; cur=[]; fills=0
for i,v in k.items():
    n=v['name']
    if 'FillFunctor' in n or 'fill' in n.lower():
        if cur: groups.append(cur); cur=[]
        continue
    cur.append(v)
if cur: groups.append(cur)
out=csv.writer(sys.stdout); out.writerow(['index','kind','m','n','k','kernel','grid','block','regs','smem_dynamic','gpu_time_ns','dram_read_bytes','dram_write_bytes'])
for p,g in zip(probs,groups):
    for v in g:
        out.writerow(p+[v['name'],v['grid'],v['block'],v.get('launch__registers_per_thread'),v.get('launch__shared_mem_per_block_dynamic'),v.get('gpu__time_duration.sum'),v.get('dram__bytes_read.sum'),v.get('dram__bytes_write.sum')])
print(len(probs),len(groups),file=sys.stderr)

/**
 * Words that go with other words in requests for tools, learnt from 1,800 requests people wrote without reading the
 * tools, each labelled with the tools that answer it: where a request says the word before the colon, an answer's name
 * or first sentence often says the words after it ("spent" and the worklog). The tool search reads them as related
 * words (./search-related.ts has the hand-written groups), at the same lower weight. Words as the index stores them
 * (./search-terms.ts: stems, and a synonym group's token after "~").
 *
 * Written by bench/learn-search-words.ts (`npm run search:learn`), which says how; not edited by hand. Data.
 */
const TABLE = `
access:correspond,secret,associ,pair; across:git,hub,insid,term,kubernet; actual:element;
admin:back,checkbox,click,element,fill; affect:articl,brave,content,gener,ideal; ago:filter;
alarm:describ,math,metric,anomali,associ; almost:detail,includ,path,~directory; analyt:given,databas;
android:event,replai; answer:detail,dynam,reflect,sequenti,sequentialthink;
anymor:entiti,graph,knowledg,multipl,observ; anywher:across,git,hub,insid,term;
app:~document,code,compat,exampl,framework; append:block,children,content,markdown,notion; approv:review;
archiv:convers; around:articl,brave,gener,ideal,news; ask:open; assign:screen,transit,~schema;
async:code,compat,framework,id,librari; attach:on,block,storag; aw:account,metric,usag; awai:inform,presenc;
axio:code,compat,exampl,framework,id; backdoor:articl,brave,content,gener,ideal; backlog:~move,given,rank;
backoff:code,compat,exampl,framework,git; backup:snapshot,~instance,block,object,storag;
balanc:math,metric,anomali,associ,detect; bash:on,~permission; batch:kubectl,kubernet;
befor:block,object,storag,store; ben:base,convers,initi,public; benchmark:articl,brave,content,gener,ideal;
bill:cost,~select; blog:code,compat,exampl,framework,id; blow:archiv,download,redirect; board:given,partial;
book:collect; bookmark:channel; bounc:reboot,~instance,~request; box:~instance,back,block,storag,volum;
branch:git,hub; break:detail,dynam,reflect,sequenti,sequentialthink; broke:commit; broken:cost,metric,usag;
browser:target,back,forward,last,open; bucket:put,object,up,~request; budget:cost;
build:workflow,archiv,download,redirect; bulk:multipl; bump:given,rank,~move;
button:element,perform,provid,~web,puppet; calendar:post,notion; cannot:event,replai,sentri;
card:back,element,forward,load,puppet; carefulli:detail,dynam,reflect,sequenti,sequentialthink;
carlo:channel,chat,post,send; caus:channel,chat,post,send,specif; channel:convers,public,base,initi;
charg:articl,brave,content,gener,ideal; chrome:target,activ,back,forward,reload; ci:workflow,re;
click:element,perform,provid,~web,puppet; cloud:cost,base,over,past,period; cloudwatch:describ; cluster:paramet;
cname:resourc,authorit,contain,domain,inform; code:git,hub,insid,term,across; codebas:progress,result,start,stream;
collect:given,databas; come:articl,brave,content,gener,ideal; commit:git,hub,branch;
compani:back,forward,load,reload,text; compar:account,cost,metric,usag; comput:account,cost,metric,usag;
config:on,~permission; configur:code,compat,exampl,framework,id; confirm:back,checkbox,element,forward,input;
consol:last,sinc,target,~message,~navigate; contact:open,checkbox,element,input,multipl;
contain:deploy,job,kubectl,kubernet,like; content:post,notion; contract:match,~message; cooki:perform,~web;
cost:block,storag,volum; countri:aggreg,collect,db,~mongodb; coupl:brave,content,gener,ideal,news;
cpu:math,metric,data,getmetricdata,valu; crashloop:kubectl,kubernet,resourc,name,option; crawl:collect;
crazi:~process; crm:collect; csv:~directory; current:id,code,compat,exampl,framework;
cve:articl,brave,content,gener,ideal; dai:gener,articl,brave,ideal,news;
dashboard:back,forward,reload,target,~navigate; data:multipl; databas:db; debug:worklog; deck:open;
deep:content,detail,json,path,view; dependabot:git,hub; deploy:kubectl,resourc,daemonset,manag,rollout;
deprec:across,git,hub,insid,term; describ:kubectl,kubernet,name,namespac,option;
design:back,current,element,forward,load; desktop:~directory; detail:articl,brave,content,gener,ideal;
dev:block,storag,volum; differ:detail,dynam,problem,reflect,sequenti; disk:block,object,storag,store,volum;
dn:resourc; doc:~document,code,compat,framework,id; done:jql,given; download:argument,gener,given,method,presign;
downtim:detail,dynam,problem,reflect,sequenti; draft:bodi,describ; drain:deploy,kubectl,kubernet;
dummi:back,checkbox,click,element,forward; eat:~process; ec:paramet; echo:back,input,string; email:collect;
enabl:collect,filter,mani,match,~document; endpoint:git,hub,insid,term,across; eng:add,between,entiti,exist,graph;
engin:post,titl; epic:belong,given; eu:articl,brave,content,gener,ideal; event:type,kubernet; ever:~pull request;
exampl:match,pattern,progress,result,start; expir:argument,gener,given,method,presign; explain:post,titl;
exponenti:code,compat,exampl,framework,id; fail:workflow,re; failov:channel,post,~message,convers,event;
failur:author,detect,devic,intellig,start; fake:area,checkbox,element,input,multipl; falcon:given,id; fan:~process;
fastapi:code,compat,framework,id,librari; featur:git,hub; feedback:post; feel:start,target,back,forward,reload;
fill:checkbox,element,input,multipl,out; filter:compat,event,exampl,framework,librari; financ:cost,metric,usag;
finish:given; fire:describ; flaki:id,re,rerun,workflow; flow:back,element,forward,load,open;
forecast:base,cost,over,period,predict; forget:entiti,graph,knowledg,observ,specif;
form:element,puppet,checkbox,input,multipl; fortun:back,block,storag,volum,~terminate;
forward:kubernet,local,resourc; freez:channel,item; frontend:kubectl,daemonset,manag,rollout,statefulset;
full:current,element,take,back,forward; function:group,event,filter,insight,on; fyi:add,between,entiti,exist,graph;
gdpr:articl,brave,content,gener,ideal; gist:add,on,~permission; github:hub;
give:collabor,argument,gener,given,method; goal:partial,perform; goe:anomali,associ,detect,express,insight;
good:review; grab:element,take,puppet; grafana:kubernet,local,resourc; green:statu,combin,commit,git,ref;
grep:progress,result,start,stream,event; group:usergroup,team; growth:given; hammer:deploy,kubectl,kubernet;
hand:assign,action,dispatch,endpoint,event; happen:back,element,forward,load,provid; hardcod:git,hub,insid,term;
head:current,disturb,dnd,durat,mode; headless:element,puppet,consol,evalu,express;
help:detail,dynam,problem,reflect,sequenti; helper:git,hub,insid,term; heroku:detail,dynam,problem,reflect,sequenti;
hire:post; hit:sentri,event,replai,type; homepag:target,start,back,forward,open; hotfix:git,hub; hour:workflow;
hung:~instance,~request; iam:correspond,id,secret,associ,pair; index:collect,describ;
ingest:kubectl,kubernet,resourc; ingress:kubectl,kubernet,resourc; interact:code,compat,exampl,framework,id;
introduc:aggreg,group,not,problem,~count; invit:convers,base,initi,public,privat;
iphon:current,dimens,element,emul,featur; januari:git,hub; jira:jql; job:re,workflow; jordan:post;
jump:account,cost,metric,usag; keep:kubernet; kei:id,secret,correspond,associ,pair;
kick:action,dispatch,endpoint,event,git; know:chat,send; known:articl,brave,content,gener,ideal; lab:open;
label:git,hub,exist; lambda:event,filter,group,function,insight; land:element,puppet;
lcp:activ,back,forward,reload,start; lead:entiti,graph,knowledg,multipl,observ;
leak:across,associ,correspond,iam,keyword; leav:notion; lee:usergroup; left:given,id,jql; lena:convers;
level:content,detail,json,path,view; like:data,getmetricdata,math,metric,valu; line:result;
load:target,back,forward,reload,~navigate; lock:access,appli,branch,polici,protect;
logic:articl,brave,content,gener,ideal; long:articl,brave,futur,gener,ideal; lt:articl,brave,content,gener,ideal;
march:object,up,~request; maria:inform,presenc,specif; mark:between,two; market:back,forward,reload,target,~url;
maya:convers; meet:post; memori:across,git,hub,keyword,state; mention:result; merg:branch;
middlewar:code,compat,exampl,framework,id; migrat:block,object,storag,store; miss:convers,git,post,repli;
mob:enabl,option,subtask; mobil:given,jql; moment:usergroup; monei:back,block,storag,volum,~instance;
monitor:kubernet,local,resourc; monolith:detail,dynam,problem,reflect,sequenti; month:cost,account,metric,usag;
msg:channel; name:back,checkbox,element,forward,input; namespac:kubernet,resourc,kubectl,name,type;
near:brave,busi,local; need:aggreg; network:last,recent,sinc,target,~count; newest:name;
news:articl,brave,content,gener,ideal; next:code,compat,exampl,framework,librari; nginx:add,on,~permission;
nightli:archiv,download,redirect,workflow; no:collect; nobodi:block,storag,volum;
node:articl,brave,content,gener,ideal; northwind:base,graph,knowledg,node,open;
not:compat,exampl,framework,librari,packag; noth:back,element,forward,load,open;
notif:current,disturb,dnd,durat,mode; notion:post,titl; npm:author,detect,devic,intellig,state; nudg:detail,specif;
offici:code,compat,exampl,framework,id; offsit:convers; okr:post,titl,notion;
older:collect,db,filter,option,paramet; onboard:post,titl; onlin:inform,presenc;
openssl:articl,brave,content,gener,ideal; optimist:code,compat,exampl,framework,id;
order:db,collect,filter,~mongodb,paramet; org:git,hub,insid,term,across; outag:post,chat,send,articl,brave;
output:archiv,download,redirect,workflow,~url; overlap:back,current,dimens,element,emul; owner:notion,post;
pai:back,click,element,provid; pair:add,worklog; panda:code,compat,exampl,framework,id; panel:base;
pass:git,ref,refer; password:asynchron,click,configur,current,element; past:associ,on,~permission;
patch:block,object,storag,store,articl; paus:current,disturb,dnd,durat,mode; payload:function;
payment:kubectl,kubernet,resourc,option,type; pdf:match,start,appli,filter,pattern;
pend:option,collect,db,filter,kubectl; peopl:convers; per:aggreg,collect,db,~mongodb,articl;
perf:perform,start,target,activ,analyz; perform:start,target,activ,back,forward;
phone:featur,target,variou,back,current; pid:~process; pin:add,channel,item; pipelin:post;
plan:detail,dynam,reflect,sequenti,sequentialthink; platform:partial; pod:kubectl,resourc,kubernet,deploy,job;
point:resourc,name,authorit,contain,dn; polici:post,titl; pool:code,compat,exampl,framework,librari;
port:kubernet,local,resourc; post:chat,channel,~message,send; postgr:articl,brave,content,gener,ideal;
postmortem:post,notion; ppl:channel,convers,event,histori,recent; presign:argument,client,given,method;
pretti:git,hub,state,across,author; previou:kubectl,resourc,daemonset,deploy,manag;
price:back,forward,reload,element,load; prioriti:changelog,date,oldest,pagin,sort;
prisma:code,compat,exampl,framework,id; privat:convers,base,initi,public;
problem:detail,dynam,reflect,sequenti,sequentialthink; prod:kubectl,resourc,kubernet,deploy,type;
product:releas,sentri; profil:info,inform; properti:event,replai,sentri; provid:name;
public:put,access,appli,polici; pull:compat,exampl,framework,librari,packag; pydant:code,compat,exampl,framework,id;
pytest:~process; python:~process; qa:option,enabl,~schema,screen,subtask;
queue:data,getmetricdata,math,metric,perform; rate:articl,brave,content,gener,ideal;
rd:math,metric,data,getmetricdata,valu; react:add,emoji,item,reaction; readi:git,hub,~pull request;
readm:content,git,hub,~directory; realli:activ,back,forward,reload,start;
reason:detail,dynam,reflect,sequenti,sequentialthink; reassign:assign; reboot:~instance,~request; recent:event;
recommend:code,compat,exampl,framework,id; red:workflow,archiv,download,redirect,~log; redesign:given;
redi:channel,match,post,~message; redirect:area,back,checkbox,click,element; refund:aggreg,collect,filter,~document;
registr:area,back,checkbox,element,forward; relat:code,compat,exampl,framework,id; remind:add;
replac:appli,base,block,line,make; repli:post,channel,chat,send,specif; replic:articl,brave,content,gener,ideal;
replica:kubectl,kubernet,deploy; requir:combin,commit,detail,git,ref; rerun:id,re,workflow;
resiz:block,object,storag,store; restart:kubectl,resourc,daemonset,manag,rollout; restor:db,~instance,snapshot;
retent:put; retri:code,compat,exampl,framework,id; retro:post; revalid:code,compat,exampl,framework,id;
revamp:belong,given; revenu:aggreg,collect,db,~mongodb; review:screen,transit,~schema;
revis:daemonset,kubectl,manag,resourc,rollout; ritual:post; rn:describ,detail; roadmap:post;
roll:daemonset,kubectl,manag,resourc,rollout; rollout:deploy,daemonset,kubectl,manag,resourc;
root:channel,chat,post,send,specif; rotat:correspond,secret,associ,pair; rout:code,compat,doc,exampl,framework;
router:code,compat,exampl,framework,id; runbook:channel,item; runner:id; rust:git,hub; safari:enabl,option,subtask;
salari:articl,brave,content,gener,ideal; sam:between,entiti,exist,graph,knowledg; sampl:collect,db,describ,~mongodb;
scale:kubectl,kubernet,deploy,paramet; schedul:channel,chat,sent; script:~process; secret:on,~permission,encrypt;
section:post; secur:author,ingress,progress,result,rule; see:event,replai; send:argument,given,method;
senior:articl,brave,content,gener,ideal; sent:chat; sentri:aggreg,group,not,problem,statu; septemb:aggreg;
servic:metric,paramet,usag; session:worklog,code,compat,framework,librari; setup:match,post,titl;
shard:detail,dynam,problem,reflect,sequenti; share:appli,filter,match,team,complet; ship:assign,statu;
shop:option,collect,filter,paramet,~document; shopdb:collect,db,filter,option,paramet;
shut:back,block,storag,volum,~terminate; sign:collect,~mongodb,filter,paramet;
signup:back,element,forward,load,reload; sit:data,getmetricdata,math,metric,valu;
sla:detail,dynam,problem,reflect,sequenti; slack:team; slow:target,start,forward,reload;
sluggish:start,target,activ,back,forward; snapshot:block,object,storag,store,db; snippet:add,on,~permission,gist;
somewher:titl; space:base,channel,convers,initi,public; specif:code,compat,exampl,framework,id;
spend:cost,metric,usag,account; spent:cost,metric,usag; spike:valu,data,event,getmetricdata,math;
spin:ami,~count,~image,~instance,~permission; split:detail,dynam,problem,reflect,sequenti;
spreadsheet:match,appli,channel,filter,team; sprint:given,partial; squash:base,branch;
src:progress,result,start,stream,activ; stabl:articl,brave,content,gener,ideal;
stack:id,plu,resourc,resourceid,resourcetyp; standup:channel,chat,convers,send; start:partial; state:describ;
statu:collect,filter,db,paramet,~mongodb; step:detail,dynam,reflect,sequenti,sequentialthink; still:insid,term;
stori:given; stuck:kubectl,resourc,daemonset,manag,statefulset; stuff:configur,exist,given,jql,lifecycl;
submit:element,puppet,checkbox,input,multipl; subtask:enabl,option,bulk,upto;
suit:author,detect,devic,intellig,start; summar:convers,channel,event,histori,post;
summari:channel,convers,event,histori,recent; sure:state; syntax:code,compat,exampl,framework,id;
tabl:detail,dynam,problem,reflect,sequenti; tag:describ,anoth,commit,compar,on;
tail:job,kubectl,kubernet,like,resourc; take:block,object,storag,store; talk:channel,convers,event,histori,recent;
tan:code,compat,exampl,framework,id; tanstack:code,compat,exampl,framework,id; task:paramet; tell:chat,send;
tenac:code,compat,exampl,framework,id; terminal:author,detect,devic,intellig,start; terraform:~process;
test:element,input,author,detect,devic; think:detail,dynam,problem,reflect,sequenti;
thread:post,~message,channel,convers,repli; three:detail,dynam,problem,reflect,sequenti; time:detail;
timelin:content; timeout:event,group,filter,insight,on; timezon:basic,info,inform,team,workspac; titl:git,hub;
todo:progress,result,start,stream; tom:convers; tomasz:team,assign,basic,info,inform;
top:aggreg,group,not,problem,~count; topic:convers; total:aggreg,collect,db,~mongodb;
touch:archiv,check,commit,download,redirect; trace:~url,plu,resourc,resourceid,resourcetyp; tracker:notion,post;
transact:code,compat,exampl,framework,librari; ttl:authorit,contain,dn,domain,inform;
tuesdai:archiv,download,redirect,workflow,~log; two:partial; type:sentri,aggreg,collect,plu,resourceid;
typeerror:sentri,id,plu,resourc,resourceid; unassign:jql; undefin:event,replai,sentri;
uniqu:code,collect,compat,doc,exampl; unreleas:project; unresolv:aggreg,group,not,problem,~count;
upgrad:block,object,storag,store; upload:complet,edg,extern,finish,getuploadurlextern;
upsert:code,compat,exampl,framework,id; us:back,block,storag,volum,convers; usag:author,detect,devic,intellig,start;
util:data,getmetricdata,math,metric,perform; valid:argument,client,given,method,gener; vendor:match;
volum:block,object,storag,store; vpn:match; vs:account,cost,metric,usag; wai:code,compat,exampl,framework,id;
walk:detail,dynam,problem,reflect,sequenti; want:base,cost,over,past,period;
warn:kubectl,kubernet,name,option,resourc; watch:watcher,account,pass; watcher:account,id,pass;
webpack:articl,brave,content,gener,ideal; week:partial; weekend:back,block,storag,volum,~terminate;
whether:detail,dynam,problem,reflect,sequenti; width:current,dimens,element,emul,featur; wiki:post;
without:detail,dynam,problem,reflect,sequenti; worker:kubectl,kubernet; workflow:re; workspac:team;
world:author,inbound,ingress,rule,secur; wrap:convers; write:gener,bodi,describ; yet:given,jql;
yml:match,pattern,progress,result,start; zone:resourc,~document; ~count:collect,db,filter,option,paramet;
~delete:exist,configur,put,replac; ~directory:ensur,exist,detail,path; ~document:target;
~environment:progress,result,start,stream,match; ~error:group,~count,aggreg,not,problem;
~fork:git,hub,authent,organ; ~image:describ,kubectl,kubernet,namespac,option; ~instance:describ;
~javascript:code,compat,exampl,framework,id; ~log:event,group,job,kubernet,like; ~message:chat,item;
~mongodb:collect,db,filter; ~move:screen,transit,~schema; ~navigate:back,element,forward,reload,current;
~process:pid,terminal; ~resolve:assign,statu; ~schema:collect,describ; ~screenshot:element,current,take,specif,back;
~terminate:pid; ~tree:content,detail,json,path,structur; ~web:articl,brave,gener,ideal,news;
`;

let parsed: ReadonlyMap<string, readonly string[]> | undefined;

/**
 * The entries of a learnt table's text (`word:item,item;`, as bench/learn-search-words.ts writes them): each word
 * with its items.
 */
export function tableEntries(text: string): [string, string[]][] {
  return text
    .split(";")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
    .map((entry) => {
      const [word, items] = entry.split(":");
      return [word!, items!.split(",")];
    });
}

/** Each request word's learnt related words: the table read on first use, not when pi starts. */
export function learnedRelated(): ReadonlyMap<string, readonly string[]> {
  parsed ??= new Map(tableEntries(TABLE));
  return parsed;
}
